import { decodeJwtClaims } from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { signSession } from '../domain/sessions.ts'
import { createHarness, ETHEREUM_ACCOUNT, resultOf, softPasskey, testKey } from '../testing/harness.ts'
import { nativeVerifyP256 } from '../workers/nativeVerify.ts'
import { verifyP256WithWebCrypto } from './authenticate.ts'

const SCHEMES = [
  'SIGNATURE_SCHEME_TK_API_P256',
  'SIGNATURE_SCHEME_TK_API_SECP256K1',
  'SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191',
  'SIGNATURE_SCHEME_TK_API_ED25519',
] as const

describe('X-Stamp', () => {
  it.each(SCHEMES)('accepts %s API keys and rejects the same stamp on a tampered body', async (scheme) => {
    const h = await createHarness()
    const key = testKey(scheme)
    const { organizationId } = await h.createSubOrganization({ keys: [key] })
    const ok = await h.submit('create_wallet', { walletName: 'W', accounts: [] }, { as: key, organizationId })
    expect(ok.status).toBe(200)
    const tampered = await h.submit(
      'create_wallet',
      { walletName: 'W', accounts: [] },
      { as: key, organizationId, tamper: (body) => body.replace('"W"', '"X"') },
    )
    expect(tampered).toEqual({
      status: 401,
      body: {
        code: 16,
        message: 'stamp signature does not match the request body',
        details: { errorCode: 'STAMP_INVALID' },
      },
    })
  })

  it('verifies against the raw bytes, whatever their JSON formatting', async () => {
    const h = await createHarness()
    const body = `{ "type": "ACTIVITY_TYPE_CREATE_WALLET",\n  "timestampMs": "${h.clock.now()}", "organizationId": "${h.organizationId}", "parameters": {"walletName": "Spaced", "accounts": []} }`
    const [header, value] = h.root.stamp(body)
    const reply = await h.post('/public/v1/submit/create_wallet', body, { [header]: value })
    expect(reply.status).toBe(200)
    expect(reply.body.activity.intent.createWalletIntent.walletName).toBe('Spaced')
  })

  it('refuses missing, malformed and unknown stamps', async () => {
    const h = await createHarness()
    const body = JSON.stringify({ organizationId: h.organizationId })
    expect(await h.post('/public/v1/query/list_wallets', body)).toMatchObject({
      status: 401,
      body: { code: 16, details: { errorCode: 'STAMP_MISSING' } },
    })
    expect(
      await h.post('/public/v1/query/list_wallets', body, { 'X-Stamp': 'not base64 json' }),
    ).toMatchObject({
      status: 401,
      body: { details: { errorCode: 'STAMP_MALFORMED' } },
    })
    const stranger = testKey()
    expect(await h.query('list_wallets', {}, { as: stranger })).toEqual({
      status: 401,
      body: {
        code: 16,
        message: 'could not find public key in organization or its parent organization',
        details: { errorCode: 'PUBLIC_KEY_NOT_FOUND' },
      },
    })
  })

  it('refuses a stamp whose scheme does not fit the registered curve', async () => {
    const h = await createHarness()
    const key = testKey('SIGNATURE_SCHEME_TK_API_SECP256K1')
    const { organizationId } = await h.createSubOrganization({ keys: [key] })
    const liar = { stamp: (body: string) => testKey('SIGNATURE_SCHEME_TK_API_ED25519').stamp(body) }
    expect((await h.query('list_wallets', {}, { as: liar, organizationId })).status).toBe(401)
  })

  it('rejects stale and future timestamps (5 minutes by default)', async () => {
    const h = await createHarness()
    const stale = String(h.clock.now() - 5 * 60_000 - 1)
    const reply = await h.submit('create_wallet', { walletName: 'W', accounts: [] }, { timestampMs: stale })
    expect(reply).toMatchObject({
      status: 401,
      body: { details: { errorCode: 'TIMESTAMP_STALE', field: 'timestampMs' } },
    })
    const future = String(h.clock.now() + 6 * 60_000)
    expect(
      (await h.submit('create_wallet', { walletName: 'W', accounts: [] }, { timestampMs: future })).status,
    ).toBe(401)
    const edge = String(h.clock.now() - 5 * 60_000)
    expect(
      (await h.submit('create_wallet', { walletName: 'W', accounts: [] }, { timestampMs: edge })).status,
    ).toBe(200)
    const notNumber = await h.submit(
      'create_wallet',
      { walletName: 'W', accounts: [] },
      { timestampMs: 'soon' },
    )
    expect(notNumber).toMatchObject({
      status: 400,
      body: { details: { errorCode: 'FIELD_INVALID', field: 'timestampMs' } },
    })
  })
})

describe.each([
  ['WebCrypto', verifyP256WithWebCrypto],
  ["Node's crypto", nativeVerifyP256],
] as const)('P-256 stamps verified natively (%s)', (_, verifyP256WithWebCrypto) => {
  it('gives a final answer on a bad signature, so a bad stamp never costs a pure-JS verification', async () => {
    const secret = p256.utils.randomSecretKey()
    const publicKey = bytesToHex(p256.getPublicKey(secret, true))
    const body = utf8ToBytes('{"organizationId":"o"}')
    const good = bytesToHex(p256.sign(body, secret, { format: 'der' }))
    expect(await verifyP256WithWebCrypto(publicKey, good, body)).toBe(true)
    // Another body, a flipped byte, and bytes that are not DER: a final "no", not "cannot decide".
    expect(await verifyP256WithWebCrypto(publicKey, good, utf8ToBytes('{}'))).toBe(false)
    const flipped = `${good.slice(0, -2)}${good.endsWith('00') ? '01' : '00'}`
    expect(await verifyP256WithWebCrypto(publicKey, flipped, body)).toBe(false)
    expect(await verifyP256WithWebCrypto(publicKey, 'abcd', body)).toBe(false)
    // A stamp with a high s (the other valid encoding of the same signature) still verifies.
    const signature = p256.Signature.fromBytes(hexToBytes(good), 'der')
    const highS = new p256.Signature(signature.r, p256.Point.CURVE().n - signature.s)
    expect(await verifyP256WithWebCrypto(publicKey, bytesToHex(highS.toBytes('der')), body)).toBe(true)
  })

  it('answers each of many concurrent stamps of one key on its own (good and bad interleaved)', async () => {
    const secret = p256.utils.randomSecretKey()
    const publicKey = bytesToHex(p256.getPublicKey(secret, true))
    const bodies = Array.from({ length: 20 }, (_, i) => utf8ToBytes(`{"n":${i}}`))
    const signatures = bodies.map((body) => bytesToHex(p256.sign(body, secret, { format: 'der' })))
    // Odd requests carry the next request's signature: each must be refused, each even one accepted.
    const answers = await Promise.all(
      bodies.map((body, i) =>
        verifyP256WithWebCrypto(publicKey, signatures[i % 2 ? (i + 1) % 20 : i]!, body),
      ),
    )
    expect(answers).toEqual(bodies.map((_, i) => i % 2 === 0))
  })

  it('verifies stamps of the service in use (a service given this verifier accepts and refuses alike)', async () => {
    const h = await createHarness({
      verifyP256: verifyP256WithWebCrypto as (p: string, s: string, b: Uint8Array) => Promise<boolean>,
    })
    const ok = await h.submit('create_wallet', { walletName: 'W', accounts: [] })
    expect(ok.status).toBe(200)
    const tampered = await h.submit(
      'create_wallet',
      { walletName: 'W', accounts: [] },
      { tamper: (body) => body.replace('"W"', '"X"') },
    )
    expect(tampered.status).toBe(401)
  })
})

describe('API key expiry', () => {
  it('accepts a key until expirationSeconds after creation, then answers "expired api key publicKey"', async () => {
    const h = await createHarness()
    const owner = testKey()
    const { organizationId, userIds } = await h.createSubOrganization({ keys: [owner] })
    const shortLived = testKey()
    resultOf(
      'create_api_keys',
      await h.submit(
        'create_api_keys',
        { userId: userIds[0], apiKeys: [shortLived.apiKey('short', '60')] },
        { as: owner, organizationId },
      ),
    )
    expect((await h.query('list_wallets', {}, { as: shortLived, organizationId })).status).toBe(200)
    h.clock.advance(59_999)
    expect((await h.query('list_wallets', {}, { as: shortLived, organizationId })).status).toBe(200)
    h.clock.advance(1)
    expect(await h.query('list_wallets', {}, { as: shortLived, organizationId })).toEqual({
      status: 401,
      body: { code: 16, message: 'expired api key publicKey', details: { errorCode: 'API_KEY_EXPIRED' } },
    })
  })
})

describe('X-Stamp-WebAuthn', () => {
  it('registers a passkey at sub-organization creation and accepts its assertions over the body hash', async () => {
    const h = await createHarness()
    const passkey = softPasskey()
    const created = resultOf(
      'create_sub_organization',
      await h.submit('create_sub_organization', {
        subOrganizationName: 'Passkey user',
        rootQuorumThreshold: 1,
        rootUsers: [
          { userName: 'Pat', apiKeys: [], authenticators: [passkey.register()], oauthProviders: [] },
        ],
      }),
    )
    const organizationId = created.subOrganizationId
    const reply = await h.submit(
      'create_wallet',
      { walletName: 'PK', accounts: [ETHEREUM_ACCOUNT] },
      { as: passkey, organizationId },
    )
    expect(reply.status).toBe(200)
    const users = await h.query('list_users', {}, { as: passkey, organizationId })
    const [authenticator] = users.body.users[0].authenticators
    expect(authenticator).toMatchObject({
      authenticatorName: 'Test passkey',
      credentialId: passkey.credentialId,
      attestationType: 'none',
      transports: ['AUTHENTICATOR_TRANSPORT_INTERNAL'],
      credential: { type: 'CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR' },
    })
    expect((await h.service.store.get('authenticators', authenticator.authenticatorId))?.counter).toBe(
      passkey.counter,
    )

    const tampered = await h.submit(
      'create_wallet',
      { walletName: 'PK2', accounts: [] },
      { as: passkey, organizationId, tamper: (body) => body.replace('PK2', 'PK3') },
    )
    expect(tampered).toMatchObject({ status: 401, body: { details: { errorCode: 'WEBAUTHN_INVALID' } } })
  })

  it('rejects a passkey registered for another relying party', async () => {
    const h = await createHarness()
    const passkey = softPasskey({ rpId: 'evil.example' })
    const reply = await h.submit('create_sub_organization', {
      subOrganizationName: 'Wrong RP',
      rootQuorumThreshold: 1,
      rootUsers: [{ userName: 'Pat', apiKeys: [], authenticators: [passkey.register()], oauthProviders: [] }],
    })
    expect(reply).toMatchObject({
      status: 400,
      body: {
        details: {
          errorCode: 'ATTESTATION_INVALID',
          field: 'parameters.rootUsers[0].authenticators[0].attestation',
        },
      },
    })
    expect((await h.query('list_suborgs')).body.organizationIds).toEqual([])
  })
})

describe('X-Session (read-only session)', () => {
  it('reads with a read-only session on query routes, never on submit routes', async () => {
    const h = await createHarness()
    const key = testKey()
    const { organizationId, userIds } = await h.createSubOrganization({ keys: [key], name: 'Reader org' })
    const result = resultOf(
      'create_read_only_session',
      await h.submit('create_read_only_session', {}, { as: key, organizationId }),
    )
    expect(result).toMatchObject({
      organizationId,
      organizationName: 'Reader org',
      userId: userIds[0],
      username: 'User 1',
    })
    expect(Number(result.sessionExpiry)).toBe(Math.floor(h.clock.now() / 1000) + 3600)
    expect(decodeJwtClaims(result.session)).toMatchObject({
      session_type: 'SESSION_TYPE_READ_ONLY',
      user_id: userIds[0],
      organization_id: organizationId,
      exp: Number(result.sessionExpiry),
    })
    const session = { stamp: () => ['X-Session', result.session] as [string, string] }
    expect((await h.query('list_wallets', {}, { as: session, organizationId })).status).toBe(200)
    expect(
      await h.submit('create_wallet', { walletName: 'no', accounts: [] }, { as: session, organizationId }),
    ).toMatchObject({
      status: 403,
      body: { code: 7, details: { errorCode: 'READ_ONLY_SESSION' } },
    })
    expect((await h.query('list_wallets', {}, { as: session })).status).toBe(403)
    h.clock.advance(3600_000)
    expect(await h.query('list_wallets', {}, { as: session, organizationId })).toMatchObject({
      status: 401,
      body: { details: { errorCode: 'SESSION_EXPIRED' } },
    })
    const forged = { stamp: () => ['X-Session', `${result.session.slice(0, -4)}AAAA`] as [string, string] }
    expect((await h.query('list_wallets', {}, { as: forged, organizationId })).status).toBe(401)
  })

  it('refuses a read-only session that names no key or passkey that made it, signed as the service signs', async () => {
    const h = await createHarness()
    const key = testKey()
    const { organizationId, userIds } = await h.createSubOrganization({ keys: [key], name: 'Reader org' })
    const now = Math.floor(h.clock.now() / 1000)
    const unbound = signSession(h.service.runtime, {
      exp: now + 3600,
      iat: now,
      public_key: '',
      session_type: 'SESSION_TYPE_READ_ONLY',
      user_id: userIds[0]!,
      organization_id: organizationId,
    })
    const session = { stamp: () => ['X-Session', unbound] as [string, string] }
    expect(await h.query('list_wallets', {}, { as: session, organizationId })).toMatchObject({
      status: 401,
      body: { details: { errorCode: 'SESSION_INVALID' } },
    })
  })
})
