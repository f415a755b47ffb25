// A read-write session ends with the passkey or API key that opened it. A lost phone's passkey
// removed from another device once left the phone's session (`stamp_login`, as signInWithPasskey
// opens it) signing every activity and renewing itself with its own key for ever; a read-only
// session the same passkey made already ended with it. Now every session records what it descends
// from (its renewals too), and removing that credential ends them in the same transaction.
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

/** `stamp_login` for a fresh session key, stamped by `as`: the session's key, or the refusal's status. */
async function signIn(h: Harness, as: Stamper, organizationId: string) {
  const key = testKey()
  h.clock.advance(1)
  const reply = await h.submit('stamp_login', { publicKey: key.publicKey }, { as, organizationId })
  if (reply.status !== 200) return { status: reply.status, code: reply.body.details?.errorCode as string }
  expect(decodeJwtClaims<SessionClaims>(resultOf('stamp_login', reply).session).organization_id).toBe(
    organizationId,
  )
  return { status: 200, key }
}

/** The status of a `create_wallet` stamped by `as`. */
async function acts(h: Harness, as: Stamper, organizationId: string): Promise<number> {
  h.clock.advance(1)
  return (
    await h.submit('create_wallet', { walletName: `w${h.clock.now()}`, accounts: [] }, { as, organizationId })
  ).status
}

describe('a passkey removed from its user (a lost device)', () => {
  it('ends the read-write session it opened and every renewal of it; the other device signs on', async () => {
    const h = await createHarness()
    const { phone, laptop, organizationId, removePhone } = await twoDevices(h)

    // The phone signed in and refreshed once (the kit's refreshSession: a new key, the old revoked).
    const first = (await signIn(h, phone, organizationId)).key!
    const renewed = (await signIn(h, first, organizationId)).key!
    // A second phone session that will try to renew itself after the removal.
    const other = (await signIn(h, phone, organizationId)).key!
    const onLaptop = (await signIn(h, laptop, organizationId)).key!
    // Control: the sessions work while the passkey is on the account.
    expect(await Promise.all([renewed, other, onLaptop].map((key) => acts(h, key, organizationId)))).toEqual([
      200, 200, 200,
    ])

    // The owner removes the phone's passkey from the laptop's session.
    await removePhone(onLaptop)

    // The passkey itself no longer stamps, nor do the sessions it opened, renewed or not...
    expect(await acts(h, phone, organizationId)).toBe(401)
    expect(await acts(h, first, organizationId)).toBe(401)
    expect(await acts(h, renewed, organizationId)).toBe(401)
    // ... and none renews itself.
    expect(await signIn(h, other, organizationId)).toEqual({ status: 401, code: 'PUBLIC_KEY_NOT_FOUND' })
    // The laptop's session, opened by the passkey still on the account, signs on and renews.
    expect(await acts(h, onLaptop, organizationId)).toBe(200)
    const laptopRenewed = await signIn(h, onLaptop, organizationId)
    expect(await acts(h, laptopRenewed.key!, organizationId)).toBe(200)
  })

  it('answers a session logging in again once its passkey is gone with 401 SESSION_EXPIRED, not a new session', async () => {
    const h = await createHarness()
    const { phone, organizationId, phoneId } = await twoDevices(h)
    const session = (await signIn(h, phone, organizationId)).key!
    // The passkey's row goes without the activity (as a racing removal the login does not see):
    // the login reads the session's origin in its own transaction and refuses.
    await h.service.store.transaction(async (tx) => {
      await tx.delete('authenticators', phoneId)
    })
    expect(await signIn(h, session, organizationId)).toEqual({ status: 401, code: 'SESSION_EXPIRED' })
  })
})

describe("a passkey sign-up's first session (a key registered with a lifetime beside the passkey)", () => {
  it('survives its refresh revoking it, and ends, renewals too, when the passkey is removed', async () => {
    const h = await createHarness()
    const [phone, laptop] = [softPasskey(), softPasskey()]
    const signUpKey = testKey()
    // As the kit's signUpWithPasskey registers them.
    const created = resultOf(
      'create_sub_organization',
      await h.submit('create_sub_organization', {
        subOrganizationName: 'Signed up on the phone',
        rootQuorumThreshold: 1,
        rootUsers: [
          {
            userName: 'Pat',
            apiKeys: [{ ...signUpKey.apiKey('session'), expirationSeconds: '900' }],
            authenticators: [phone.register(undefined, 'Phone')],
            oauthProviders: [],
          },
        ],
      }),
    )
    const organizationId = created.subOrganizationId as string
    const userId = created.rootUserIds[0] as string
    const at = { as: signUpKey, organizationId }
    h.clock.advance(1)
    resultOf(
      'create_authenticators',
      await h.submit(
        'create_authenticators',
        { userId, authenticators: [laptop.register(undefined, 'Laptop')] },
        at,
      ),
    )
    // The kit's refreshSession: stamp_login with the sign-up's key, then that key revoked by the new one.
    const renewed = (await signIn(h, signUpKey, organizationId)).key!
    const keys = (await h.query('get_api_keys', { userId }, { as: renewed, organizationId })).body
      .apiKeys as {
      apiKeyId: string
      credential: { publicKey: string }
    }[]
    const signUpKeyId = keys.find((k) => k.credential.publicKey === signUpKey.publicKey)!.apiKeyId
    h.clock.advance(1)
    resultOf(
      'delete_api_keys',
      await h.submit(
        'delete_api_keys',
        { userId, apiKeyIds: [signUpKeyId] },
        { as: renewed, organizationId },
      ),
    )
    expect(await acts(h, renewed, organizationId)).toBe(200)
    const again = (await signIn(h, renewed, organizationId)).key!

    // The phone is lost: the laptop removes its passkey.
    const users = await h.query('list_users', {}, { as: laptop, organizationId })
    const phoneId = (
      users.body.users[0].authenticators as { authenticatorId: string; credentialId: string }[]
    ).find((a) => a.credentialId === phone.credentialId)!.authenticatorId
    h.clock.advance(1)
    resultOf(
      'delete_authenticators',
      await h.submit(
        'delete_authenticators',
        { userId, authenticatorIds: [phoneId] },
        { as: laptop, organizationId },
      ),
    )
    expect({
      renewed: await acts(h, renewed, organizationId),
      again: await acts(h, again, organizationId),
    }).toEqual({
      renewed: 401,
      again: 401,
    })
  })
})

describe('an API key deleted from its user', () => {
  it('ends the read-write sessions it opened; a session logging out ends no other', async () => {
    const h = await createHarness()
    const [kept, dropped] = [testKey(), testKey()]
    const sub = await h.createSubOrganization({ name: 'keys' })
    const at = { as: sub.keys[0]!, organizationId: sub.organizationId }
    const userId = sub.userIds[0]!
    const created = resultOf(
      'create_api_keys',
      await h.submit(
        'create_api_keys',
        { userId, apiKeys: [kept.apiKey('kept'), dropped.apiKey('dropped')] },
        at,
      ),
    )
    const droppedId = created.apiKeyIds[1] as string
    const fromDropped = (await signIn(h, dropped, sub.organizationId)).key!
    const renewed = (await signIn(h, fromDropped, sub.organizationId)).key!
    const fromKept = (await signIn(h, kept, sub.organizationId)).key!
    const alsoFromKept = (await signIn(h, kept, sub.organizationId)).key!

    // A session logging out (deleting its own key) ends no other session of the user.
    const keys = (await h.query('get_api_keys', { userId }, at)).body.apiKeys as {
      apiKeyId: string
      credential: { publicKey: string }
    }[]
    const idOf = (key: { publicKey: string }) =>
      keys.find((k) => k.credential.publicKey === key.publicKey)!.apiKeyId
    h.clock.advance(1)
    resultOf(
      'delete_api_keys',
      await h.submit(
        'delete_api_keys',
        { userId, apiKeyIds: [idOf(alsoFromKept)] },
        { as: alsoFromKept, organizationId: sub.organizationId },
      ),
    )
    expect(await acts(h, alsoFromKept, sub.organizationId)).toBe(401)
    expect(await acts(h, renewed, sub.organizationId)).toBe(200)

    h.clock.advance(1)
    resultOf('delete_api_keys', await h.submit('delete_api_keys', { userId, apiKeyIds: [droppedId] }, at))
    expect({
      dropped: await acts(h, dropped, sub.organizationId),
      renewed: await acts(h, renewed, sub.organizationId),
      fromKept: await acts(h, fromKept, sub.organizationId),
    }).toEqual({ dropped: 401, renewed: 401, fromKept: 200 })
  })
})

describe('a session key that records no origin (issued before sessions recorded one)', () => {
  it('renews nothing, and ends when any passkey of its user is removed', async () => {
    const h = await createHarness()
    const { phone, laptop, organizationId, userId, removePhone } = await twoDevices(h)
    const [older, oldest] = [
      (await signIn(h, laptop, organizationId)).key!,
      (await signIn(h, laptop, organizationId)).key!,
    ]
    // As an earlier version wrote them: no origin.
    await h.service.store.transaction(async (tx) => {
      for (const row of await tx.findBy('apiKeys', 'userId', userId)) {
        const { origin: _, ...before } = row
        await tx.put('apiKeys', before)
      }
    })
    expect(await acts(h, older, organizationId)).toBe(200)
    expect(await signIn(h, older, organizationId)).toEqual({ status: 401, code: 'SESSION_EXPIRED' })
    // Removing the phone's passkey ends it, though the laptop opened it: nothing says which did.
    const fresh = (await signIn(h, laptop, organizationId)).key!
    await removePhone(fresh)
    expect({
      older: await acts(h, older, organizationId),
      oldest: await acts(h, oldest, organizationId),
      fresh: await acts(h, fresh, organizationId),
      phone: await acts(h, phone, organizationId),
    }).toEqual({ older: 401, oldest: 401, fresh: 200, phone: 401 })
  })
})
