// Deleting a user deletes every way they sign in (their durable API keys, passkeys, OAuth links,
// e-mail and phone logins), their second factors and the sessions they opened. Under an MFA policy
// a root user's delete_api_keys of another user's durable key waits for the root's own second
// factor (2377c60d), but delete_users of that user, which takes the key and more, ran at once from
// the root's stolen session. delete_users is now a destructive change: it waits for every policy
// of the submitter, whatever the users it lists hold.
import { base32nopad } from '@scure/base'
import { beforeEach, describe, expect, it } from 'vitest'
import { totp } from '../../src/mfa/totp.ts'
import {
  createHarness,
  type Harness,
  resultOf,
  softPasskey,
  type TestKey,
  testKey,
} from '../../src/testing/harness.ts'

const HELD = 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'
const TOTP_STEP = [{ any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] }]

let h: Harness
let org: string
let root: string
let rootKey: TestKey

beforeEach(async () => {
  h = await createHarness()
  rootKey = testKey()
  const sub = await h.createSubOrganization({ keys: [rootKey] })
  org = sub.organizationId
  root = sub.userIds[0]!
  return () => h.service.close()
})

const submitAs = (key: TestKey, path: Parameters<Harness['submit']>[0], params: unknown) => {
  h.clock.advance(1)
  return h.submit(path, params, { as: key, organizationId: org })
}

const whoami = async (as: TestKey) => (await h.query('whoami', { organizationId: org }, { as })).status
const userExists = async (userId: string) => Boolean(await h.service.store.get('users', userId))

/** A non-root user of the organization with what `user` gives it. */
async function userWith(user: { apiKeys?: unknown[]; authenticators?: unknown[]; userEmail?: string }) {
  return resultOf(
    'create_users',
    await submitAs(rootKey, 'create_users', {
      users: [
        {
          userName: 'other',
          apiKeys: [],
          authenticators: [],
          oauthProviders: [],
          userTags: [],
          ...user,
        },
      ],
    }),
  ).userIds[0] as string
}

/** A session of the root user opened by `stamp_login` (a thief's, once stolen). */
async function rootSession(): Promise<TestKey> {
  const session = testKey()
  resultOf('stamp_login', await submitAs(rootKey, 'stamp_login', { publicKey: session.publicKey }))
  return session
}

/** A confirmed TOTP factor of the root user and an MFA policy on exports only: returns the next code. */
async function rootUnderMfa() {
  const enrolled = resultOf(
    'latchkey_create_totp_factor',
    await submitAs(rootKey, 'latchkey_create_totp_factor', { userId: root }),
  )
  const secret = base32nopad.decode(enrolled.secret)
  resultOf(
    'latchkey_confirm_totp_factor',
    await submitAs(rootKey, 'latchkey_confirm_totp_factor', {
      userId: root,
      factorId: enrolled.factorId,
      code: totp(secret, h.clock.now()),
    }),
  )
  resultOf(
    'create_mfa_policy',
    await submitAs(rootKey, 'create_mfa_policy', {
      userId: root,
      mfaPolicyName: 'exports need a code',
      condition: "activity.action == 'EXPORT'",
      requiredAuthenticationMethods: TOTP_STEP,
      order: 0,
    }),
  )
  return () => {
    h.clock.advance(30_000)
    return totp(secret, h.clock.now())
  }
}

describe("delete_users from a root user's session under MFA", () => {
  it("waits for the root's second factor, as delete_api_keys of the user's durable key does; the key signs until the code comes", async () => {
    const backEnd = testKey()
    const other = await userWith({ apiKeys: [backEnd.apiKey('back end')] })
    const code = await rootUnderMfa()
    const thief = await rootSession()
    const backEndKeyId = (await h.service.store.findBy('apiKeys', 'userId', other))[0]!.id
    // As 2377c60d made it: deleting the back end's key waits.
    const keyRemoval = await submitAs(thief, 'delete_api_keys', { userId: other, apiKeyIds: [backEndKeyId] })
    expect(keyRemoval.body.activity?.status).toBe(HELD)
    // Deleting its user, which takes the key and everything else of the user's, waits too.
    const removal = await submitAs(thief, 'delete_users', { userIds: [other] })
    expect(removal.status).toBe(200)
    expect(removal.body.activity?.status).toBe(HELD)
    expect(await userExists(other)).toBe(true)
    expect(await whoami(backEnd)).toBe(200)
    // A wrong code counts nothing.
    const wrong = await submitAs(thief, 'latchkey_satisfy_mfa', {
      fingerprint: removal.body.activity.fingerprint,
      totpCode: '000000',
    })
    expect(wrong.body.errorCode ?? wrong.body.details?.errorCode).toBe('OTP_INVALID')
    expect(await userExists(other)).toBe(true)
    // The root's code runs it, once.
    const proven = await submitAs(rootKey, 'latchkey_satisfy_mfa', {
      fingerprint: removal.body.activity.fingerprint,
      totpCode: code(),
    })
    expect(proven.body.activity?.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await userExists(other)).toBe(false)
    expect(await whoami(backEnd)).toBe(401)
  })

  it('waits whatever the users it lists hold: a passkey only, or no credential at all', async () => {
    const withPasskey = await userWith({ authenticators: [softPasskey().register(undefined, 'Phone')] })
    const bare = await userWith({ userEmail: 'bare@example.com' })
    await rootUnderMfa()
    const thief = await rootSession()
    for (const userIds of [[withPasskey], [bare], [withPasskey, bare]]) {
      const removal = await submitAs(thief, 'delete_users', { userIds })
      expect([userIds, removal.body.activity?.status]).toEqual([userIds, HELD])
    }
    expect(await userExists(withPasskey)).toBe(true)
    expect(await userExists(bare)).toBe(true)
  })

  it('runs at once for a submitter with no MFA policy', async () => {
    const backEnd = testKey()
    const other = await userWith({ apiKeys: [backEnd.apiKey('back end')] })
    const removal = await submitAs(rootKey, 'delete_users', { userIds: [other] })
    expect(removal.body.activity?.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await userExists(other)).toBe(false)
    expect(await whoami(backEnd)).toBe(401)
  })
})
