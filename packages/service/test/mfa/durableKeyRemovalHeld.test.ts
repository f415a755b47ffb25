// Deleting a user's durable API key (a wallet's sign-in key, a recovery key, a back end's key)
// unlinks a login and ends every session that key opened. Under an MFA policy it once ran at once
// from a stolen session with no second factor, while deleting a passkey, unlinking an OAuth
// identity or changing a contact waited (FACTOR_CHANGES): a thief signed the owner out and took a
// way in away. Now it waits for every policy of the submitter like a passkey's removal; deleting
// session keys (a logout, another device's session, a sign-up's first session key) still runs.
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

beforeEach(async () => {
  h = await createHarness()
})

const submitAs = (
  organizationId: string,
  key: TestKey,
  path: Parameters<Harness['submit']>[0],
  params: unknown,
) => {
  h.clock.advance(1)
  return h.submit(path, params, { as: key, organizationId })
}

/** A sub-organization of one root user signed up as the kit's signUpWithPasskey does, plus `extra` keys. */
async function signedUp(extra: TestKey[] = []) {
  const signUpKey = testKey()
  const created = resultOf(
    'create_sub_organization',
    await h.submit('create_sub_organization', {
      subOrganizationName: 'Signed up',
      rootQuorumThreshold: 1,
      rootUsers: [
        {
          userName: 'Pat',
          apiKeys: [
            { ...signUpKey.apiKey('session'), expirationSeconds: '86400' },
            ...extra.map((key, index) => key.apiKey(`durable ${index}`)),
          ],
          authenticators: [softPasskey().register(undefined, 'Phone')],
          oauthProviders: [],
        },
      ],
    }),
  )
  return {
    organizationId: created.subOrganizationId as string,
    userId: created.rootUserIds[0] as string,
    signUpKey,
  }
}

/** The id of the user's key whose public key is `key`'s, read from the store. */
async function keyIdOf(userId: string, key: TestKey): Promise<string> {
  const row = (await h.service.store.findBy('apiKeys', 'userId', userId)).find(
    (candidate) => candidate.publicKey === key.publicKey,
  )
  if (!row) throw new Error(`no key ${key.publicKey} on user ${userId}`)
  return row.id
}

const keyExists = async (id: string) => Boolean(await h.service.store.get('apiKeys', id))

/** A session `stamp_login` opens with `opener`'s stamp. */
async function sessionOpenedBy(organizationId: string, opener: TestKey): Promise<TestKey> {
  const session = testKey()
  resultOf(
    'stamp_login',
    await submitAs(organizationId, opener, 'stamp_login', { publicKey: session.publicKey }),
  )
  return session
}

/** A confirmed TOTP factor and an MFA policy on wallet exports only: returns the next code. */
async function underMfa(organizationId: string, userId: string, as: TestKey) {
  const enrolled = resultOf(
    'latchkey_create_totp_factor',
    await submitAs(organizationId, as, 'latchkey_create_totp_factor', { userId }),
  )
  const secret = base32nopad.decode(enrolled.secret)
  resultOf(
    'latchkey_confirm_totp_factor',
    await submitAs(organizationId, as, 'latchkey_confirm_totp_factor', {
      userId,
      factorId: enrolled.factorId,
      code: totp(secret, h.clock.now()),
    }),
  )
  resultOf(
    'create_mfa_policy',
    await submitAs(organizationId, as, 'create_mfa_policy', {
      userId,
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

const whoami = async (organizationId: string, as: TestKey) =>
  (await h.query('whoami', { organizationId }, { as })).status

describe('a stolen session of a user under MFA and their durable API keys', () => {
  it('waits for the second factor to delete the wallet key, which then ends the sessions it opened', async () => {
    const wallet = testKey()
    const { organizationId: org, userId, signUpKey } = await signedUp([wallet])
    const walletKeyId = await keyIdOf(userId, wallet)
    // The owner's session, opened by the wallet key (signInWithWallet); a thief's session.
    const ownerSession = await sessionOpenedBy(org, wallet)
    const thief = await sessionOpenedBy(org, signUpKey)
    const code = await underMfa(org, userId, signUpKey)

    // As deleting the user's passkey waits.
    const [passkey] = await h.service.store.findBy('authenticators', 'userId', userId)
    const passkeyRemoval = await submitAs(org, thief, 'delete_authenticators', {
      userId,
      authenticatorIds: [passkey!.id],
    })
    const removal = await submitAs(org, thief, 'delete_api_keys', { userId, apiKeyIds: [walletKeyId] })
    expect([passkeyRemoval.body.activity?.status, removal.body.activity?.status]).toEqual([HELD, HELD])
    expect(await keyExists(walletKeyId)).toBe(true)
    expect([await whoami(org, ownerSession), await whoami(org, wallet)]).toEqual([200, 200])

    // With the code, it runs: the key goes, and with it the session it opened.
    const done = await submitAs(org, thief, 'latchkey_satisfy_mfa', {
      fingerprint: removal.body.activity.fingerprint,
      totpCode: code(),
    })
    expect(done.body.activity?.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await keyExists(walletKeyId)).toBe(false)
    expect(await whoami(org, ownerSession)).toBe(401)
  })

  it('waits when a durable key is listed beside session keys (a recovery key registered at sign-up)', async () => {
    const recovery = testKey()
    const { organizationId: org, userId, signUpKey } = await signedUp([recovery])
    const thief = await sessionOpenedBy(org, signUpKey)
    const other = await sessionOpenedBy(org, signUpKey)
    await underMfa(org, userId, signUpKey)
    const ids = [await keyIdOf(userId, other), await keyIdOf(userId, recovery), await keyIdOf(userId, thief)]
    const removal = await submitAs(org, thief, 'delete_api_keys', { userId, apiKeyIds: ids })
    expect(removal.body.activity?.status).toBe(HELD)
    expect(await Promise.all(ids.map(keyExists))).toEqual([true, true, true])
  })

  it('still logs out at once: its own key, another session of the user, the sign-up first session key', async () => {
    const wallet = testKey()
    const { organizationId: org, userId, signUpKey } = await signedUp([wallet])
    const kept = await sessionOpenedBy(org, wallet)
    const device = await sessionOpenedBy(org, wallet)
    const thief = await sessionOpenedBy(org, wallet)
    await underMfa(org, userId, signUpKey)

    // Another device's session, then the sign-up's first session key (a lifetime and an origin).
    const deviceId = await keyIdOf(userId, device)
    const signUpKeyId = await keyIdOf(userId, signUpKey)
    for (const id of [deviceId, signUpKeyId])
      expect(
        (await submitAs(org, kept, 'delete_api_keys', { userId, apiKeyIds: [id] })).body.activity?.status,
      ).toBe('ACTIVITY_STATUS_COMPLETED')
    // The kit's logout: a session deleting its own key.
    const thiefId = await keyIdOf(userId, thief)
    expect(
      (await submitAs(org, thief, 'delete_api_keys', { userId, apiKeyIds: [thiefId] })).body.activity?.status,
    ).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await Promise.all([deviceId, signUpKeyId, thiefId].map(keyExists))).toEqual([false, false, false])
    expect([await whoami(org, thief), await whoami(org, kept), await whoami(org, wallet)]).toEqual([
      401, 200, 200,
    ])
  })

  it('does not wait for a key the activity cannot delete: another organization gets its 404', async () => {
    const { organizationId: org, userId, signUpKey } = await signedUp()
    const elsewhere = testKey()
    const other = await signedUp([elsewhere])
    const otherKeyId = await keyIdOf(other.userId, elsewhere)
    const thief = await sessionOpenedBy(org, signUpKey)
    await underMfa(org, userId, signUpKey)
    const removal = await submitAs(org, thief, 'delete_api_keys', { userId, apiKeyIds: [otherKeyId] })
    expect([removal.status, removal.body.details?.errorCode]).toEqual([404, 'API_KEY_NOT_FOUND'])
    expect(await keyExists(otherKeyId)).toBe(true)
  })
})

describe("a root user's stolen session under MFA and another user's durable key", () => {
  it("waits for the root user's own second factor, as deleting that user's passkey does", async () => {
    const [rootKey, backEnd] = [testKey(), testKey()]
    const sub = await h.createSubOrganization({ keys: [rootKey, backEnd] })
    const org = sub.organizationId
    const [root, other] = sub.userIds as [string, string]
    const backEndId = await keyIdOf(other, backEnd)
    const thief = await sessionOpenedBy(org, rootKey)
    const code = await underMfa(org, root, rootKey)

    const removal = await submitAs(org, thief, 'delete_api_keys', { userId: other, apiKeyIds: [backEndId] })
    expect(removal.body.activity?.status).toBe(HELD)
    expect(await whoami(org, backEnd)).toBe(200)
    const done = await submitAs(org, thief, 'latchkey_satisfy_mfa', {
      fingerprint: removal.body.activity.fingerprint,
      totpCode: code(),
    })
    expect(done.body.activity?.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await keyExists(backEndId)).toBe(false)
  })
})
