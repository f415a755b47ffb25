// A sign-up's first session key (registered with a lifetime by create_sub_organization, credential
// type API_KEY_P256) descends from the passkeys registered with it, and from nothing else. One that
// records no `origin` (written before sessions recorded one, or by an older instance during the
// rolling upgrade) was treated as a registered key: removing the passkey it was registered beside
// ended neither it nor its renewals (their origin was the key itself), and the lost phone holding
// it went on. It now descends from the passkeys registered with its user (`sessionOriginOf`), and
// any passkey's removal ends it (`endSessionsOpenedWith`); migration 0024 records that origin on
// the rows written before it (test/data/migrations.test.ts). A lifelong key registered beside the
// session (a recovery key) did not open it: removing it signs no one out. A session a temporary
// key opened ends with that key, and is not renewed after it.
import { decodeJwtClaims, type SessionClaims } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import {
  createHarness,
  type Harness,
  resultOf,
  type Stamper,
  softPasskey,
  testKey,
} from '../../src/testing/harness.ts'
import { twoDevices } from './twoDevices.ts'

async function acts(h: Harness, as: Stamper, organizationId: string): Promise<number> {
  h.clock.advance(1)
  return (
    await h.submit('create_wallet', { walletName: `w${h.clock.now()}`, accounts: [] }, { as, organizationId })
  ).status
}

async function signIn(h: Harness, as: Stamper, organizationId: string) {
  const key = testKey()
  h.clock.advance(1)
  const reply = await h.submit('stamp_login', { publicKey: key.publicKey }, { as, organizationId })
  expect(reply.status).toBe(200)
  expect(decodeJwtClaims<SessionClaims>(resultOf('stamp_login', reply).session).organization_id).toBe(
    organizationId,
  )
  return key
}

async function signedUpOnPhone(h: Harness, stripOrigin: boolean) {
  const signUpKey = testKey()
  const { organizationId, userId, removePhone } = await twoDevices(h, {
    name: 'Signed up on the phone',
    apiKeys: [{ ...signUpKey.apiKey('session'), expirationSeconds: '86400' }],
  })
  if (stripOrigin)
    // The row as a version before 0024 (or an older instance mid-upgrade) wrote it; 0024 keeps it
    // (its credential type is not a session type: see test/data/migrations.test.ts's 'registered').
    await h.service.store.transaction(async (tx) => {
      for (const key of await tx.findBy('apiKeys', 'userId', userId))
        if (key.publicKey === signUpKey.publicKey) {
          const { origin: _, ...row } = key
          await tx.put('apiKeys', row)
        }
    })
  return { organizationId, userId, signUpKey, removePhone }
}

describe('a first session key written without an origin (before 0024 / by an older instance)', () => {
  it('control: with its origin recorded, the passkey removal ends it and its renewal', async () => {
    const h = await createHarness()
    const { organizationId, signUpKey, removePhone } = await signedUpOnPhone(h, false)
    const renewed = await signIn(h, signUpKey, organizationId)
    await removePhone()
    expect([await acts(h, signUpKey, organizationId), await acts(h, renewed, organizationId)]).toEqual([
      401, 401,
    ])
  })

  it('ends with the passkey it was registered beside, renewals too', async () => {
    const h = await createHarness()
    const { organizationId, signUpKey, removePhone } = await signedUpOnPhone(h, true)
    const renewed = await signIn(h, signUpKey, organizationId)
    await removePhone()
    // The lost phone's sign-up session and its renewal end, as with a recorded origin.
    expect([await acts(h, signUpKey, organizationId), await acts(h, renewed, organizationId)]).toEqual([
      401, 401,
    ])
  })

  it("survives the kit's refresh (stamp_login with it, then it deleted by the new session)", async () => {
    // Recording the origin-less key itself as the renewal's origin would let the kit's
    // refreshSession, which revokes the old key with the new one, end the session it just made.
    const h = await createHarness()
    const { organizationId, userId, signUpKey } = await signedUpOnPhone(h, true)
    const renewed = await signIn(h, signUpKey, organizationId)
    const keys = (await h.query('get_api_keys', { userId }, { as: renewed, organizationId })).body
      .apiKeys as { apiKeyId: string; credential: { publicKey: string } }[]
    const signUpKeyId = keys.find((k) => k.credential.publicKey === signUpKey.publicKey)!.apiKeyId
    h.clock.advance(1)
    const revoked = await h.submit(
      'delete_api_keys',
      { userId, apiKeyIds: [signUpKeyId] },
      { as: renewed, organizationId },
    )
    expect(revoked.status).toBe(200)
    expect(await acts(h, renewed, organizationId)).toBe(200)
  })
})

describe('what a first session and a session a key opened descend from', () => {
  it('a recovery key registered beside the first session did not open it: removing it signs no one out', async () => {
    const h = await createHarness()
    const [signUpKey, recovery] = [testKey(), testKey()]
    const created = resultOf(
      'create_sub_organization',
      await h.submit('create_sub_organization', {
        subOrganizationName: 'Signed up by a back office',
        rootQuorumThreshold: 1,
        rootUsers: [
          {
            userName: 'Pat',
            apiKeys: [
              { ...signUpKey.apiKey('session'), expirationSeconds: '86400' },
              recovery.apiKey('recovery key'),
            ],
            authenticators: [softPasskey().register(undefined, 'Phone')],
            oauthProviders: [],
          },
        ],
      }),
    )
    const organizationId = created.subOrganizationId as string
    const userId = created.rootUserIds[0] as string
    const renewed = await signIn(h, signUpKey, organizationId)
    const keys = (await h.query('get_api_keys', { userId }, { as: renewed, organizationId })).body
      .apiKeys as { apiKeyId: string; credential: { publicKey: string } }[]
    const recoveryId = keys.find((k) => k.credential.publicKey === recovery.publicKey)!.apiKeyId
    h.clock.advance(1)
    resultOf(
      'delete_api_keys',
      await h.submit('delete_api_keys', { userId, apiKeyIds: [recoveryId] }, { as: renewed, organizationId }),
    )
    expect([await acts(h, signUpKey, organizationId), await acts(h, renewed, organizationId)]).toEqual([
      200, 200,
    ])
  })

  it('a session a temporary key opened ends with that key, and is not renewed after', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization({ name: 'temporary key' })
    const at = { as: sub.keys[0]!, organizationId: sub.organizationId }
    const temporary = testKey()
    // Added after its user was created: a registered key, not a sign-up's first session.
    h.clock.advance(1)
    resultOf(
      'create_api_keys',
      await h.submit(
        'create_api_keys',
        { userId: sub.userIds[0], apiKeys: [{ ...temporary.apiKey('a minute'), expirationSeconds: '60' }] },
        at,
      ),
    )
    const session = await signIn(h, temporary, sub.organizationId)
    // Control: while the key lives, its session renews.
    await signIn(h, session, sub.organizationId)
    h.clock.advance(60_000)
    const late = await h.submit(
      'stamp_login',
      { publicKey: testKey().publicKey },
      { as: session, organizationId: sub.organizationId },
    )
    // The session was cut to end with the key (test/security/temporaryKeySessionEndsWithKey.test.ts):
    // it is refused as expired itself, before its origin is read.
    expect(late.status).toBe(401)
    expect(late.body.details.errorCode).toBe('API_KEY_EXPIRED')
  })
})
