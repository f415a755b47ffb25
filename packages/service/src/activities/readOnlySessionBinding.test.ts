// A read-only session made by a login session's key ends with it: it once lasted its hour whatever
// made it, so one opened by a 60 s session, or by a session since logged out (a thief's, cut off by
// its owner), kept reading the organization's wallets, users and activities. One made by a passkey
// ends when the passkey is removed (a lost device taken off the account): it once read on.
import { describe, expect, it } from 'vitest'
import { createHarness, resultOf, softPasskey, testKey } from '../testing/harness.ts'

describe('read-only sessions made by a login session', () => {
  it('a read-only session minted by a 60 s login session does not outlive that session', async () => {
    const h = await createHarness()
    const durable = testKey()
    const { organizationId } = await h.createSubOrganization({ keys: [durable] })
    const as = { as: durable, organizationId }

    // A short login session (e.g. what the operator or the app allowed: 60 s).
    const sessionKey = testKey()
    resultOf(
      'stamp_login',
      await h.submit('stamp_login', { publicKey: sessionKey.publicKey, expirationSeconds: '60' }, as),
    )
    // The session mints a read-only session while it is live.
    const ro = resultOf(
      'create_read_only_session',
      await h.submit('create_read_only_session', {}, { as: sessionKey, organizationId }),
    )
    const readOnly = { stamp: () => ['X-Session', ro.session] as [string, string] }

    // Ten minutes later the login session has long expired...
    h.clock.advance(10 * 60_000)
    const stamped = await h.query('list_wallets', {}, { as: sessionKey, organizationId })
    expect(stamped.body?.details?.errorCode).toBe('API_KEY_EXPIRED')
    // ...so what it minted must be over too.
    const read = await h.query('list_wallets', {}, { as: readOnly, organizationId })
    expect(read.status).toBe(401)
  })

  it('a read-only session minted by a login session ends when that session logs out', async () => {
    const h = await createHarness()
    const durable = testKey()
    const { organizationId, userIds } = await h.createSubOrganization({ keys: [durable] })
    const as = { as: durable, organizationId }
    const sessionKey = testKey()
    resultOf('stamp_login', await h.submit('stamp_login', { publicKey: sessionKey.publicKey }, as))
    const ro = resultOf(
      'create_read_only_session',
      await h.submit('create_read_only_session', {}, { as: sessionKey, organizationId }),
    )
    const readOnly = { stamp: () => ['X-Session', ro.session] as [string, string] }

    // The owner (or the stolen session itself) logs out: the session key is deleted.
    const list = await h.query('get_api_keys', { userId: userIds[0] }, as)
    const sessionRow = (list.body.apiKeys as { apiKeyId: string; credential: { publicKey: string } }[]).find(
      (k) => k.credential.publicKey === sessionKey.publicKey,
    )!
    expect(
      (
        await h.submit(
          'delete_api_keys',
          { userId: userIds[0], apiKeyIds: [sessionRow.apiKeyId] },
          { as: sessionKey, organizationId },
        )
      ).status,
    ).toBe(200)
    expect((await h.query('list_wallets', {}, { as: sessionKey, organizationId })).status).toBe(401)
    // The read-only session minted from it must be gone with it.
    const read = await h.query('list_wallets', {}, { as: readOnly, organizationId })
    expect(read.status).toBe(401)
  })

  it('a read-only session minted with a passkey ends when that passkey is removed', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization()
    const owner = { as: sub.keys[0]!, organizationId: sub.organizationId }
    const passkey = softPasskey()
    const [authenticatorId] = resultOf(
      'create_authenticators',
      await h.submit(
        'create_authenticators',
        { userId: sub.userIds[0], authenticators: [passkey.register()] },
        owner,
      ),
    ).authenticatorIds
    h.clock.advance(1)
    // The passkey (on a device later lost) opens a read-only session, which reads.
    const ro = resultOf(
      'create_read_only_session',
      await h.submit('create_read_only_session', {}, { as: passkey, organizationId: sub.organizationId }),
    )
    const readOnly = { stamp: () => ['X-Session', ro.session] as [string, string] }
    const read = () => h.query('list_wallets', {}, { as: readOnly, organizationId: sub.organizationId })
    expect((await read()).status).toBe(200)
    // Removing another passkey of the user changes nothing.
    const other = softPasskey()
    const [otherId] = resultOf(
      'create_authenticators',
      await h.submit(
        'create_authenticators',
        { userId: sub.userIds[0], authenticators: [other.register()] },
        owner,
      ),
    ).authenticatorIds
    h.clock.advance(1)
    resultOf(
      'delete_authenticators',
      await h.submit('delete_authenticators', { userId: sub.userIds[0], authenticatorIds: [otherId] }, owner),
    )
    expect((await read()).status).toBe(200)
    // The owner removes the lost device's passkey: neither it nor what it opened reads any more.
    h.clock.advance(1)
    resultOf(
      'delete_authenticators',
      await h.submit(
        'delete_authenticators',
        { userId: sub.userIds[0], authenticatorIds: [authenticatorId] },
        owner,
      ),
    )
    expect(
      (await h.query('list_wallets', {}, { as: passkey, organizationId: sub.organizationId })).status,
    ).toBe(401)
    const after = await read()
    expect(after.status).toBe(401)
    expect(after.body.message).toContain('the passkey that made it was removed')
  })
})
