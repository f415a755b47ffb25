// A key that is no session (`isSessionKey`) ends only where it is listed, never with a sign-in it
// heads. A key registered with a lifetime in the same millisecond as its user (a back end making a
// sub-organization and a yearly key at once) was taken for a sign-up's first session key written
// without an origin, so a session it opened (`stamp_login`) recorded it as its sign-in, and that
// session's own logout, which runs without the root quorum (b48416bd) and is never held for a
// second factor, deleted the durable key with it: the quorum and the MFA policy that hold a direct
// removal of it were passed by (`endSignIns`, domain/sessions.ts).
import { base32nopad } from '@scure/base'
import { describe, expect, it } from 'vitest'
import { isSessionKey } from '../../src/domain/sessions.ts'
import { totp } from '../../src/mfa/totp.ts'
import { createHarness, resultOf, testKey } from '../../src/testing/harness.ts'
import { keyIdOf, login, WEBHOOKS } from './signIns.ts'

const COMPLETED = 'ACTIVITY_STATUS_COMPLETED'
const WAITING = 'ACTIVITY_STATUS_CONSENSUS_NEEDED'

describe('a durable key heading a sign-in', () => {
  it("a session's own logout does not delete the durable key that opened it without the quorum", async () => {
    const h = await createHarness(WEBHOOKS as never)
    const sub = await h.createSubOrganization({ users: 2, threshold: 1 })
    const organizationId = sub.organizationId
    const [k1] = sub.keys
    const [u1, u2] = sub.userIds as [string, string]
    // Same millisecond as the user's creation: a back end registering a yearly key right away.
    const durable = testKey()
    resultOf(
      'create_api_keys',
      await h.submit(
        'create_api_keys',
        {
          userId: u1,
          apiKeys: [{ ...durable.apiKey('yearly back-end key'), expirationSeconds: '31536000' }],
        },
        { as: k1!, organizationId },
      ),
    )
    const durableId = await keyIdOf(h, u1, durable)
    const row = (await h.service.store.get('apiKeys', durableId))!
    expect(isSessionKey(row)).toBe(false) // durable, as the fix's predicate sees it
    // It opens a session.
    const session = await login(h, durable, organizationId, '900')
    const sessionId = await keyIdOf(h, u1, session)
    // The root quorum goes to 2 of 2.
    h.clock.advance(1)
    const raised = await h.submit(
      'update_root_quorum',
      { threshold: 2, userIds: [u1, u2] },
      { as: k1!, organizationId },
    )
    expect(raised.body.activity?.status, JSON.stringify(raised.body)).toBe(COMPLETED)
    // Deleting the durable key directly waits for the co-root, whoever stamps it.
    h.clock.advance(1)
    const direct = await h.submit(
      'delete_api_keys',
      { userId: u1, apiKeyIds: [durableId] },
      { as: durable, organizationId },
    )
    expect(direct.body.activity?.status, JSON.stringify(direct.body)).toBe(WAITING)
    h.clock.advance(1)
    const viaSession = await h.submit(
      'delete_api_keys',
      { userId: u1, apiKeyIds: [durableId] },
      { as: session, organizationId },
    )
    expect(viaSession.body.activity?.status, JSON.stringify(viaSession.body)).toBe(WAITING)
    expect(await h.service.store.get('apiKeys', durableId)).toBeDefined()
    // The session's own logout runs at once (the fix) ...
    h.clock.advance(1)
    const out = await h.submit(
      'delete_api_keys',
      { userId: u1, apiKeyIds: [sessionId] },
      { as: session, organizationId },
    )
    expect(out.body.activity?.status, JSON.stringify(out.body)).toBe(COMPLETED)
    expect(await h.service.store.get('apiKeys', sessionId)).toBeUndefined()
    // ... and must end only the sign-in: the durable key stays (fails: the cascade deleted it).
    expect(await h.service.store.get('apiKeys', durableId)).toBeDefined()
  })

  it("a session's logout does not delete, without a code, the durable key that opened it", async () => {
    const h = await createHarness(WEBHOOKS as never)
    const sub = await h.createSubOrganization({ users: 1 })
    const organizationId = sub.organizationId
    const [k1] = sub.keys
    const [u1] = sub.userIds as [string]
    const durable = testKey()
    resultOf(
      'create_api_keys',
      await h.submit(
        'create_api_keys',
        { userId: u1, apiKeys: [{ ...durable.apiKey('yearly key'), expirationSeconds: '31536000' }] },
        { as: k1!, organizationId },
      ),
    )
    const durableId = await keyIdOf(h, u1, durable)
    expect(isSessionKey((await h.service.store.get('apiKeys', durableId))!)).toBe(false)
    const session = await login(h, durable, organizationId, '900')
    const sessionId = await keyIdOf(h, u1, session)
    h.clock.advance(1)
    const enrolled = resultOf(
      'latchkey_create_totp_factor',
      await h.submit('latchkey_create_totp_factor', { userId: u1 }, { as: k1!, organizationId }),
    )
    h.clock.advance(1)
    resultOf(
      'latchkey_confirm_totp_factor',
      await h.submit(
        'latchkey_confirm_totp_factor',
        {
          userId: u1,
          factorId: enrolled.factorId,
          code: totp(base32nopad.decode(enrolled.secret), h.clock.now()),
        },
        { as: k1!, organizationId },
      ),
    )
    h.clock.advance(1)
    resultOf(
      'create_mfa_policy',
      await h.submit(
        'create_mfa_policy',
        {
          userId: u1,
          mfaPolicyName: 'exports need a code',
          condition: "activity.action == 'EXPORT'",
          requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] }],
          order: 0,
        },
        { as: k1!, organizationId },
      ),
    )
    // Deleting the durable key directly is held for the code.
    h.clock.advance(1)
    const direct = await h.submit(
      'delete_api_keys',
      { userId: u1, apiKeyIds: [durableId] },
      { as: session, organizationId },
    )
    expect(direct.body.activity?.status, JSON.stringify(direct.body)).not.toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await h.service.store.get('apiKeys', durableId)).toBeDefined()
    // The logout is not held, and must not delete it (fails: it does).
    h.clock.advance(1)
    const out = await h.submit(
      'delete_api_keys',
      { userId: u1, apiKeyIds: [sessionId] },
      { as: session, organizationId },
    )
    expect(out.body.activity?.status, JSON.stringify(out.body)).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await h.service.store.get('apiKeys', durableId)).toBeDefined()
  })
})
