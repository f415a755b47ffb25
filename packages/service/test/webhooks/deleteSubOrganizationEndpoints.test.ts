import { afterEach, describe, expect, it } from 'vitest'
import { createHarness, type Harness, resultOf } from '../../src/testing/harness.ts'
import { PRUNE_JOB } from '../../src/webhooks/retention.ts'
import type { WebhookRequest, WebhookResponse } from '../../src/webhooks/WebhooksOptions.ts'

/**
 * A deleted sub-organization's webhook endpoints go with it (the webhooks wing's `forget`, as
 * `delete_webhook_endpoint` deletes one): its deliveries that wait for a receiver that is down
 * find no endpoint when they are retried and end, nothing of the deleted account is sent once the
 * receiver is back, and its delivery rows are pruned after the retention window. The parent's
 * endpoints are not touched and go on receiving.
 */

const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.service.close()))
})

const EVERY_ACTIVITY = [{ eventType: 'ACTIVITY_UPDATES' }]
const RETENTION_MS = 10 * 60_000
const SUB_URLS = ['https://sub-a.example.com/hook', 'https://sub-b.example.com/hook']
const PARENT_URL = 'https://parent.example.com/hook'

async function setUp() {
  const posts: string[] = []
  const down = new Set<string>()
  const transport = async (request: WebhookRequest): Promise<WebhookResponse> => {
    if (down.has(request.url)) return { status: 503, body: '' }
    posts.push(request.url)
    return { status: 200, body: '' }
  }
  const h = await createHarness({
    webhooks: { transport, retention: { maxAgeMs: RETENTION_MS } },
    jobs: { pollMs: 3_600_000, backoff: { baseMs: 1000, maxMs: 60_000 } },
  })
  harnesses.push(h)
  const flush = async () => {
    for (let round = 0; round < 50; round++) {
      await h.service.runtime.jobs.idle()
      if ((await h.service.runtime.jobs.runDue()) === 0) {
        await h.service.runtime.jobs.idle()
        if ((await h.service.runtime.jobs.runDue()) === 0) return
      }
    }
  }
  const sub = await h.createSubOrganization()
  const as = { as: sub.keys[0]!, organizationId: sub.organizationId }
  const create = async (url: string, name: string, options?: typeof as) =>
    resultOf(
      'create_webhook_endpoint',
      await h.submit('create_webhook_endpoint', { url, name, subscriptions: EVERY_ACTIVITY }, options),
    ).endpointId as string
  const subEndpoints = [await create(SUB_URLS[0]!, 'a', as), await create(SUB_URLS[1]!, 'b', as)]
  const parentEndpoint = await create(PARENT_URL, 'parent')
  return { h, sub, as, posts, down, flush, subEndpoints, parentEndpoint }
}

describe('delete_sub_organization and its webhook endpoints', () => {
  it('its endpoints are deleted with it, each with a prune job; the parent’s stay', async () => {
    const { h, sub, as, subEndpoints, parentEndpoint } = await setUp()
    const { store } = h.service
    resultOf(
      'delete_sub_organization',
      await h.submit('delete_sub_organization', { deleteWithoutExport: true }, as),
    )
    expect(await store.get('organizations', sub.organizationId)).toBeUndefined()
    expect(await store.findBy('webhookEndpoints', 'organizationId', sub.organizationId)).toEqual([])
    for (const endpointId of subEndpoints) {
      expect(await store.get('webhookEndpoints', endpointId)).toBeUndefined()
      const prune = await store.get('jobs', `${PRUNE_JOB}.${endpointId}`)
      expect(prune?.kind).toBe(PRUNE_JOB)
      expect(prune?.runAfter).toBeGreaterThanOrEqual(h.clock.now() + RETENTION_MS - 60_000)
    }
    const listed = await h.query('list_webhook_endpoints', {})
    expect(listed.status).toBe(200)
    expect((listed.body.webhookEndpoints as { endpointId: string }[]).map((e) => e.endpointId)).toEqual([
      parentEndpoint,
    ])
  }, 60_000)

  it('a receiver back up after the deletion gets no POST of the deleted account; its rows are pruned', async () => {
    const { h, as, posts, down, flush, subEndpoints } = await setUp()
    const { store } = h.service
    // The account's receivers are down while it exists: its deliveries wait to be retried.
    for (const url of SUB_URLS) down.add(url)
    h.clock.advance(1)
    resultOf('create_wallet', await h.submit('create_wallet', { walletName: 'w', accounts: [] }, as))
    await flush()
    const waiting = async () =>
      (
        await Promise.all(subEndpoints.map((id) => store.findBy('webhookDeliveries', 'endpointId', id)))
      ).flat()
    expect((await waiting()).some((row) => row.state === 'pending')).toBe(true)
    h.clock.advance(1)
    resultOf(
      'delete_sub_organization',
      await h.submit('delete_sub_organization', { deleteWithoutExport: true }, as),
    )
    await flush()
    // The receivers come back; every retry (and the deletion's own event) would be due by now.
    down.clear()
    const before = posts.length
    for (let i = 0; i < 5; i++) {
      h.clock.advance(60_000)
      await flush()
    }
    expect(posts.slice(before).filter((url) => SUB_URLS.includes(url))).toEqual([])
    // The parent's endpoint is untouched: it got the sub-organization's events, the deletion's too.
    expect(posts.filter((url) => url === PARENT_URL).length).toBeGreaterThanOrEqual(2)
    // After the retention window the deleted endpoints' rows go.
    h.clock.advance(RETENTION_MS)
    await flush()
    expect(await waiting()).toEqual([])
  }, 60_000)
})
