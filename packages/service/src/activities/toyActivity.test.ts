import type { ActivityPath } from '@latchkey/protocol'
import { describe, expect, it, vi } from 'vitest'
import type { Reader } from '../kernel/Reader.ts'
import type { ActivityContext, ActivityHandler, ActivityHandlers } from '../kernel/registry.ts'
import { createHarness, resultOf, testKey } from '../testing/harness.ts'

// A new activity's one registry entry. In the repository it is written in ACTIVITIES itself, next to
// its types in ActivityMap; a test cannot edit the protocol's source, so it adds the entry here.
vi.mock('@latchkey/protocol', async (importOriginal) => {
  const protocol = await importOriginal<typeof import('@latchkey/protocol')>()
  const ACTIVITIES = {
    ...protocol.ACTIVITIES,
    ...protocol.activityDefinitions<{ toy_echo: unknown }>({
      toy_echo: {
        types: ['ACTIVITY_TYPE_TOY_ECHO'],
        resource: 'USER',
        action: 'UPDATE',
        proxyUser: false,
        readOnly: true,
      },
    }),
  }
  return { ...protocol, ACTIVITIES, ACTIVITY_PATHS: Object.keys(ACTIVITIES) }
})

const TOY = 'toy_echo' as ActivityPath

// Its handler file. `toy_echo` is not in the ActivityMap this test compiles against, hence the cast;
// a real handler is `defineActivity('toy_echo', …)`, typed by the map.
const toyEcho = {
  parse: (r: Reader) => ({ text: r.string('text', { max: 100 }) }),
  run: (_ctx: ActivityContext, parameters: { text: string }) => ({ text: parameters.text }),
} as unknown as ActivityHandler

describe('a new activity', () => {
  it('needs only its registry entry and its handler: wire names, policies and the pipeline follow', async () => {
    // Listed where handlers are listed (a plugin's or createService's `activities`).
    const h = await createHarness({ activities: { [TOY]: toyEcho } as ActivityHandlers })
    const reply = await h.submit(TOY, { text: 'hello' })
    expect(reply.body.activity).toMatchObject({
      type: 'ACTIVITY_TYPE_TOY_ECHO',
      status: 'ACTIVITY_STATUS_COMPLETED',
      intent: { toyEchoIntent: { text: 'hello' } },
      result: { toyEchoResult: { text: 'hello' } },
    })
    expect((await h.submit(TOY, { text: 'x' }, { type: 'ACTIVITY_TYPE_TOY' })).body.details).toMatchObject({
      errorCode: 'ACTIVITY_TYPE_MISMATCH',
    })
    expect((await h.submit(TOY, { text: 7 })).body.details).toMatchObject({ field: 'parameters.text' })

    // A policy naming its resource and action opens it to a non-root user.
    const backend = testKey()
    resultOf(
      'create_users',
      await h.submit('create_users', {
        users: [
          {
            userName: 'backend',
            apiKeys: [backend.apiKey()],
            authenticators: [],
            oauthProviders: [],
            userTags: [],
          },
        ],
      }),
    )
    const asBackend = { as: backend }
    expect((await h.submit(TOY, { text: 'a' }, asBackend)).body.details.outcome).toBe('OUTCOME_DENY_IMPLICIT')
    resultOf(
      'create_policy',
      await h.submit('create_policy', {
        policyName: 'Back end updates users',
        effect: 'EFFECT_ALLOW',
        condition: "activity.resource == 'USER' && activity.action == 'UPDATE'",
        notes: '',
      }),
    )
    h.clock.advance(1)
    expect((await h.submit(TOY, { text: 'a' }, asBackend)).body.activity.result).toEqual({
      toyEchoResult: { text: 'a' },
    })
  })
})
