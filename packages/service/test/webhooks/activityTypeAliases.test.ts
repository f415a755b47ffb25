// An event's `activityType` is the name its caller submitted, and a subscription's `activityTypes`
// filter compared it letter for letter, while an activity accepts several names
// (`ACTIVITY_TYPE_CREATE_API_KEYS` and `_V2`, `INIT_OTP` V1 to V3, …): the operator watching its
// end users' new credentials with a filter on the current name never heard of a key an end user
// added under the older one (found by the audit of webhook events). A filter now matches an
// activity by any name it accepts, either way round.
import { ACTIVITIES } from '@latchkey/protocol'
import { afterEach, describe, expect, it } from 'vitest'
import { createHarness, fakeClock, type Harness, testKey } from '../../src/testing/harness.ts'
import { nodeWebhookTransport } from '../../src/webhooks/nodeTransport.ts'
import { useLoopbackReceiver } from './loopbackReceiver.ts'

const rx = useLoopbackReceiver()
let h: Harness | undefined
afterEach(async () => {
  await h?.service.close()
  h = undefined
})

const current = ACTIVITIES.create_api_keys.type
const older = ACTIVITIES.create_api_keys.types.find((type) => type !== current)!

/** The activity ids the parent's endpoint filtered on `watched` hears of, for one key added under each name. */
async function heardWith(watched: string) {
  rx.status = 200
  rx.received.length = 0
  h = await createHarness({
    clock: fakeClock(Date.now()),
    webhooks: { transport: nodeWebhookTransport() },
    jobs: { pollMs: 20 },
  })
  const endpoint = await h.submit('create_webhook_endpoint', {
    url: `http://127.0.0.1:${rx.port}/`,
    name: 'new credentials',
    subscriptions: [
      { eventType: 'ACTIVITY_UPDATES', filtersJson: JSON.stringify({ activityTypes: [watched] }) },
    ],
  })
  expect(endpoint.status).toBe(200)
  const key = testKey()
  const sub = await h.createSubOrganization({ keys: [key] })
  const added: string[] = []
  for (const type of [current, older]) {
    h.clock.advance(1000)
    const reply = await h.submit(
      'create_api_keys',
      { userId: sub.userIds[0], apiKeys: [testKey().apiKey(`by ${type}`)] },
      { as: key, organizationId: sub.organizationId, type },
    )
    expect(reply.status).toBe(200)
    added.push(reply.body.activity.id as string)
  }
  const until = Date.now() + 10_000
  while (Date.now() < until && rx.received.length < 2) await new Promise((done) => setTimeout(done, 50))
  return { added, heard: rx.received.map((body) => (body.data as { activityId: string }).activityId) }
}

describe('an activityTypes filter hears an activity under any name it accepts', { timeout: 60_000 }, () => {
  it('a filter on the current name hears a key added under the older one', async () => {
    expect(older).toBeDefined()
    const { added, heard } = await heardWith(current)
    expect(heard.sort()).toEqual([...added].sort())
  })

  it('a filter on the older name hears a key added under the current one', async () => {
    const { added, heard } = await heardWith(older)
    expect(heard.sort()).toEqual([...added].sort())
  })
})
