import { decodeJwtClaims } from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { verifyJwt } from '../kernel/crypto/index.ts'
import { createHarness, resultOf, softPasskey, testKey } from '../testing/harness.ts'

async function passkeyOrg(h: Awaited<ReturnType<typeof createHarness>>) {
  const passkey = softPasskey()
  const created = resultOf(
    'create_sub_organization',
    await h.submit('create_sub_organization', {
      subOrganizationName: 'Passkey org',
      rootQuorumThreshold: 1,
      rootUsers: [{ userName: 'Pat', apiKeys: [], authenticators: [passkey.register()], oauthProviders: [] }],
    }),
  )
  return {
    passkey,
    organizationId: created.subOrganizationId as string,
    userId: created.rootUserIds[0] as string,
  }
}

describe('stamp_login', () => {
  it('turns a passkey stamp into a read-write session bound to the client key', async () => {
    const h = await createHarness()
    const { passkey, organizationId, userId } = await passkeyOrg(h)
    const sessionKey = testKey()
    const { session } = resultOf(
      'stamp_login',
      await h.submit('stamp_login', { publicKey: sessionKey.publicKey }, { as: passkey, organizationId }),
    )
    const claims = verifyJwt<Record<string, unknown>>(
      session,
      hexToBytes(h.service.dev.sessionPublicKey),
      h.clock.now() / 1000,
    )
    expect(claims).toEqual({
      exp: h.clock.now() / 1000 + 900,
      iat: h.clock.now() / 1000,
      public_key: sessionKey.publicKey,
      session_type: 'SESSION_TYPE_READ_WRITE',
      user_id: userId,
      organization_id: organizationId,
    })
    // The JWKS publishes the key that verifies it.
    const jwks = await (await h.service.app.request('/public/v1/jwks')).json()
    expect(jwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', kid: 'session' })

    expect(
      (await h.submit('create_wallet', { walletName: 'S', accounts: [] }, { as: sessionKey, organizationId }))
        .status,
    ).toBe(200)
    const keys = (await h.query('get_api_keys', { userId }, { as: sessionKey, organizationId })).body.apiKeys
    expect(keys).toEqual([
      expect.objectContaining({
        credential: { publicKey: sessionKey.publicKey, type: 'CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256' },
        expirationSeconds: '900',
      }),
    ])
    h.clock.advance(900_000)
    expect(await h.query('list_wallets', {}, { as: sessionKey, organizationId })).toMatchObject({
      status: 401,
      body: { message: 'expired api key publicKey' },
    })
  })

  it('signs in a passkey user who names the parent organization (client does not know its sub-organization)', async () => {
    const h = await createHarness()
    const { passkey, organizationId, userId } = await passkeyOrg(h)
    const sessionKey = testKey()
    const reply = await h.submit('stamp_login', { publicKey: sessionKey.publicKey }, { as: passkey })
    expect(reply.body.activity.organizationId).toBe(organizationId)
    const claims = decodeJwtClaims<{ organization_id: string; user_id: string }>(
      resultOf('stamp_login', reply).session,
    )
    expect(claims).toMatchObject({ organization_id: organizationId, user_id: userId })
    // Other activities still refuse the parent organization.
    h.clock.advance(1)
    expect((await h.submit('create_wallet', { walletName: 'x', accounts: [] }, { as: passkey })).status).toBe(
      403,
    )
  })

  it('honours expirationSeconds and invalidateExisting, and logs out with delete_api_keys', async () => {
    const h = await createHarness()
    const owner = testKey()
    const { organizationId, userIds } = await h.createSubOrganization({ keys: [owner] })
    const at = { as: owner, organizationId }
    const first = testKey()
    const second = testKey()
    const s1 = resultOf(
      'stamp_login',
      await h.submit('stamp_login', { publicKey: first.publicKey, expirationSeconds: '60' }, at),
    )
    expect(decodeJwtClaims<{ exp: number }>(s1.session).exp).toBe(h.clock.now() / 1000 + 60)
    h.clock.advance(1)
    // Uncompressed input is accepted and compressed.
    const uncompressed = bytesToHex(p256.Point.fromBytes(hexToBytes(second.publicKey)).toBytes(false))
    const s2 = resultOf(
      'stamp_login',
      await h.submit('stamp_login', { publicKey: uncompressed, invalidateExisting: true }, at),
    )
    expect(decodeJwtClaims<{ public_key: string }>(s2.session).public_key).toBe(second.publicKey)
    expect((await h.query('list_wallets', {}, { as: first, organizationId })).status).toBe(401)
    expect((await h.query('list_wallets', {}, { as: owner, organizationId })).status).toBe(200)
    const sessionKeys = (await h.query('get_api_keys', { userId: userIds[0] }, at)).body.apiKeys.filter(
      (key: { credential: { type: string } }) =>
        key.credential.type === 'CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256',
    )
    expect(sessionKeys).toHaveLength(1)
    // Logout: the session revokes its own key.
    const logout = await h.submit(
      'delete_api_keys',
      { userId: userIds[0], apiKeyIds: [sessionKeys[0].apiKeyId] },
      { as: second, organizationId },
    )
    expect(resultOf('delete_api_keys', logout)).toEqual({ apiKeyIds: [sessionKeys[0].apiKeyId] })
    expect((await h.query('list_wallets', {}, { as: second, organizationId })).status).toBe(401)
    const bad = await h.submit('stamp_login', { publicKey: 'zz' }, at)
    expect(bad).toMatchObject({ status: 400, body: { details: { field: 'parameters.publicKey' } } })
  })

  it('a login deletes the user’s login keys a week past their expiry, and keeps every other key', async () => {
    const h = await createHarness()
    const owner = testKey()
    const { organizationId, userIds } = await h.createSubOrganization({ keys: [owner] })
    const at = { as: owner, organizationId }
    const login = async (key: ReturnType<typeof testKey>, expirationSeconds?: string) =>
      resultOf(
        'stamp_login',
        await h.submit(
          'stamp_login',
          { publicKey: key.publicKey, ...(expirationSeconds ? { expirationSeconds } : {}) },
          at,
        ),
      )
    const [brief, month, later, last] = [testKey(), testKey(), testKey(), testKey()]
    await login(brief, '60')
    await login(month, String(30 * 24 * 3600))
    // An agent's expiring key is not a login key: no login deletes it.
    const agent = testKey()
    resultOf(
      'create_api_keys',
      await h.submit('create_api_keys', { userId: userIds[0], apiKeys: [agent.apiKey('agent', '60')] }, at),
    )
    const names = async () =>
      (await h.query('get_api_keys', { userId: userIds[0] }, at)).body.apiKeys
        .map((key: { credential: { publicKey: string } }) => key.credential.publicKey)
        .sort()
    const week = 7 * 24 * 3600 * 1000
    h.clock.advance(60_000 + week - 1)
    await login(later)
    // Expired a week less a millisecond ago: still there, still answered as expired.
    expect(await names()).toEqual([owner, brief, month, agent, later].map((key) => key.publicKey).sort())
    expect((await h.query('list_wallets', {}, { as: brief, organizationId })).body.details).toMatchObject({
      errorCode: 'API_KEY_EXPIRED',
    })
    h.clock.advance(1)
    await login(last)
    expect(await names()).toEqual([owner, month, agent, later, last].map((key) => key.publicKey).sort())
    expect((await h.query('list_wallets', {}, { as: brief, organizationId })).body.details).toMatchObject({
      errorCode: 'PUBLIC_KEY_NOT_FOUND',
    })
    expect((await h.query('list_wallets', {}, { as: month, organizationId })).status).toBe(200)
  })
})

describe('API keys and authenticators', () => {
  it('adds and removes API keys of every curve', async () => {
    const h = await createHarness()
    const owner = testKey()
    const { organizationId, userIds } = await h.createSubOrganization({ keys: [owner] })
    const at = { as: owner, organizationId }
    const k1 = testKey('SIGNATURE_SCHEME_TK_API_SECP256K1')
    const k2 = testKey('SIGNATURE_SCHEME_TK_API_ED25519')
    const { apiKeyIds } = resultOf(
      'create_api_keys',
      await h.submit(
        'create_api_keys',
        { userId: userIds[0], apiKeys: [k1.apiKey('k1'), k2.apiKey('k2')] },
        at,
      ),
    )
    expect(apiKeyIds).toHaveLength(2)
    expect((await h.query('list_wallets', {}, { as: k2, organizationId })).status).toBe(200)
    h.clock.advance(1)
    const dup = await h.submit('create_api_keys', { userId: userIds[0], apiKeys: [k1.apiKey('again')] }, at)
    expect(dup).toMatchObject({
      status: 409,
      body: { details: { field: 'parameters.apiKeys[0].publicKey' } },
    })
    const all = (await h.query('get_api_keys', {}, at)).body.apiKeys
    expect(all.map((key: { apiKeyName: string }) => key.apiKeyName)).toEqual(['key 1', 'k1', 'k2'])
    expect(
      resultOf('delete_api_keys', await h.submit('delete_api_keys', { userId: userIds[0], apiKeyIds }, at)),
    ).toEqual({ apiKeyIds })
    expect((await h.query('list_wallets', {}, { as: k2, organizationId })).status).toBe(401)
    const missing = await h.submit('delete_api_keys', { userId: userIds[0], apiKeyIds: ['nope'] }, at)
    expect(missing).toMatchObject({
      status: 404,
      body: { details: { errorCode: 'API_KEY_NOT_FOUND', field: 'parameters.apiKeyIds[0]' } },
    })
    const lastKey = (await h.query('get_api_keys', {}, at)).body.apiKeys[0].apiKeyId
    const lockout = await h.submit('delete_api_keys', { userId: userIds[0], apiKeyIds: [lastKey] }, at)
    expect(lockout).toMatchObject({ status: 400, body: { details: { field: 'parameters.apiKeyIds' } } })
  })

  it('lets a user who can sign in again by e-mail revoke its last session key, but not a key-only user', async () => {
    const h = await createHarness()
    for (const userEmail of ['otp@example.com', undefined]) {
      const owner = testKey()
      const created = resultOf(
        'create_sub_organization',
        await h.submit('create_sub_organization', {
          subOrganizationName: `Org ${userEmail ?? 'keys only'}`,
          rootQuorumThreshold: 1,
          rootUsers: [
            {
              userName: 'U',
              userEmail,
              apiKeys: [owner.apiKey('durable')],
              authenticators: [],
              oauthProviders: [],
            },
          ],
        }),
      )
      const organizationId = created.subOrganizationId as string
      const userId = created.rootUserIds[0] as string
      const session = testKey()
      h.clock.advance(1)
      await h.submit('stamp_login', { publicKey: session.publicKey }, { as: owner, organizationId })
      const keys = (await h.query('get_api_keys', { userId }, { as: session, organizationId })).body
        .apiKeys as {
        apiKeyId: string
        apiKeyName: string
      }[]
      const durable = keys.find((key) => key.apiKeyName === 'durable')!.apiKeyId
      const sessionKeyId = keys.find((key) => key.apiKeyName !== 'durable')!.apiKeyId
      h.clock.advance(1)
      const dropDurable = await h.submit(
        'delete_api_keys',
        { userId, apiKeyIds: [durable] },
        { as: session, organizationId },
      )
      // A session key alone does not keep an account reachable; an e-mail address does.
      if (userEmail) {
        expect(dropDurable.status).toBe(200)
        // The session the durable key opened ended with it: the user is left with the e-mail alone.
        h.clock.advance(1)
        const logout = await h.submit(
          'delete_api_keys',
          { userId, apiKeyIds: [sessionKeyId] },
          { as: session, organizationId },
        )
        expect(logout).toMatchObject({
          status: 401,
          body: { details: { errorCode: 'PUBLIC_KEY_NOT_FOUND' } },
        })
      } else {
        expect(dropDurable).toMatchObject({
          status: 400,
          body: { details: { field: 'parameters.apiKeyIds' } },
        })
      }
    }
  })

  it('refuses to delete the last passkey of a user whose only other credential is a session key', async () => {
    const h = await createHarness()
    const { passkey, organizationId, userId } = await passkeyOrg(h)
    const session = testKey()
    await h.submit('stamp_login', { publicKey: session.publicKey }, { as: passkey, organizationId })
    const { authenticators } = (await h.query('get_user', { userId }, { as: session, organizationId })).body
      .user
    h.clock.advance(1)
    const removal = await h.submit(
      'delete_authenticators',
      { userId, authenticatorIds: [authenticators[0].authenticatorId] },
      { as: session, organizationId },
    )
    expect(removal).toMatchObject({
      status: 400,
      body: { details: { field: 'parameters.authenticatorIds' } },
    })
  })

  it('adds, reads and removes passkeys', async () => {
    const h = await createHarness()
    const owner = testKey()
    const { organizationId, userIds } = await h.createSubOrganization({ keys: [owner] })
    const at = { as: owner, organizationId }
    const passkey = softPasskey()
    const { authenticatorIds } = resultOf(
      'create_authenticators',
      await h.submit(
        'create_authenticators',
        { userId: userIds[0], authenticators: [passkey.register('Y2hhbGxlbmdl', 'Phone')] },
        at,
      ),
    )
    const read = await h.query('get_authenticator', { authenticatorId: authenticatorIds[0] }, at)
    expect(read.body.authenticator).toMatchObject({
      authenticatorId: authenticatorIds[0],
      authenticatorName: 'Phone',
      credentialId: passkey.credentialId,
      aaguid: '00000000-0000-0000-0000-000000000000',
    })
    expect((await h.query('get_authenticator', { authenticatorId: 'nope' }, at)).status).toBe(404)
    expect(
      (await h.submit('create_wallet', { walletName: 'P', accounts: [] }, { as: passkey, organizationId }))
        .status,
    ).toBe(200)
    const again = await h.submit(
      'create_authenticators',
      { userId: userIds[0], authenticators: [passkey.register()] },
      at,
    )
    expect(again).toMatchObject({ status: 409, body: { details: { errorCode: 'ALREADY_EXISTS' } } })
    const removed = await h.submit('delete_authenticators', { userId: userIds[0], authenticatorIds }, at)
    expect(resultOf('delete_authenticators', removed)).toEqual({ authenticatorIds })
    h.clock.advance(1)
    expect(
      (await h.submit('create_wallet', { walletName: 'P', accounts: [] }, { as: passkey, organizationId }))
        .status,
    ).toBe(401)
    const missing = await h.submit(
      'delete_authenticators',
      { userId: userIds[0], authenticatorIds: ['x'] },
      at,
    )
    expect(missing).toMatchObject({
      status: 404,
      body: { details: { errorCode: 'AUTHENTICATOR_NOT_FOUND' } },
    })
  })
})
