import {
  ATTESTED_STAMP_HEADER,
  CLIENT_SIGNATURE_SCHEME,
  CORS_ALLOWED_HEADERS,
  clientSignatureMessage,
  decodeJwtClaims,
  PROXY_CONFIG_HEADER,
  type SessionClaims,
} from '@latchkey/protocol'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { encryptOtpCodeToBundle } from '@turnkey/crypto'
import { describe, expect, it } from 'vitest'
import { type ClientKey, clientKey, googleAuthenticate } from '../../test/support/publishedClient.ts'
import { createHarness, ETHEREUM_ACCOUNT, type Harness, type Json, resultOf } from '../testing/harness.ts'

const APP = 'http://app.test'

/** A browser page at APP calling the auth proxy (`/v1/<path>`). */
async function proxy(h: Harness, path: string, body: unknown = {}, headers: Record<string, string> = {}) {
  const res = await h.service.app.request(`/v1/${path}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
      Origin: APP,
      ...headers,
    },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as Json, headers: res.headers }
}

const errorOf = (reply: { status: number; body: Json }) => ({
  status: reply.status,
  errorCode: reply.body.details?.errorCode,
  field: reply.body.details?.field,
})

const tokenId = (token: string) => decodeJwtClaims<{ id: string }>(token).id

/** The published `clientSignature` for a login: the bound key names the session key. */
function loginConsent(bound: ClientKey, token: string, sessionPublicKey = bound.publicKey) {
  const message = clientSignatureMessage({
    type: 'USAGE_TYPE_LOGIN',
    tokenId: tokenId(token),
    login: { publicKey: sessionPublicKey },
  })
  return {
    message,
    publicKey: bound.publicKey,
    scheme: CLIENT_SIGNATURE_SCHEME,
    signature: bound.sign(message),
  }
}

/** The published `clientSignature` for a sign-up: the bound key lists the new account's credentials. */
function signupConsent(
  bound: ClientKey,
  token: string,
  usage: { apiKeys?: unknown[]; authenticators?: unknown[]; oauthProviders?: unknown[]; email?: string },
) {
  const message = clientSignatureMessage({
    type: 'USAGE_TYPE_SIGNUP',
    tokenId: tokenId(token),
    signupV2: { apiKeys: [], authenticators: [], oauthProviders: [], ...usage },
  })
  return {
    message,
    publicKey: bound.publicKey,
    scheme: CLIENT_SIGNATURE_SCHEME,
    signature: bound.sign(message),
  }
}

const codeFor = async (h: Harness, contact: string) => {
  const res = await h.service.app.request(`/dev/outbox?contact=${encodeURIComponent(contact)}`, {
    headers: { Accept: 'application/json' },
  })
  return ((await res.json()) as { messages: { code: string }[] }).messages[0]!.code
}

/** v1 OTP up to a verification token bound to `bound`. */
async function verified(h: Harness, email: string, bound = clientKey()) {
  const init = await proxy(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email })
  expect(init.status).toBe(200)
  const verify = await proxy(h, 'otp_verify', {
    otpId: init.body.otpId,
    otpCode: await codeFor(h, email),
    publicKey: bound.publicKey,
  })
  expect(verify.status).toBe(200)
  return { bound, verificationToken: verify.body.verificationToken as string }
}

/** A signed-up account for `email` (its token is then spent on sign-up only). */
async function account(h: Harness, email: string) {
  const { bound, verificationToken } = await verified(h, email)
  const signup = await proxy(h, 'signup', {
    userEmail: email,
    verificationToken,
    clientSignature: bound.sign(verificationToken),
    wallet: { path: "m/44'/60'/0'/0/0", curve: 'CURVE_SECP256K1' },
  })
  expect(signup.status).toBe(200)
  return signup.body as { organizationId: string; userId: string; walletId: string; addresses: string[] }
}

describe('a login signature must name the session key', () => {
  it('refuses an intercepted (token, signature) pair redeemed for another key at otp_login', async () => {
    const h = await createHarness()
    await account(h, 'ada@example.com')
    const { bound, verificationToken } = await verified(h, 'ada@example.com')
    const captured = bound.sign(verificationToken)
    const attacker = clientKey()
    const stolen = await proxy(h, 'otp_login', {
      verificationToken,
      publicKey: attacker.publicKey,
      clientSignature: captured,
    })
    expect(errorOf(stolen)).toEqual({
      status: 401,
      errorCode: 'CLIENT_SIGNATURE_INVALID',
      field: 'parameters.publicKey',
    })
    // The token was not spent by the refused attempt: its owner still logs in, for the bound key.
    const own = await proxy(h, 'otp_login', {
      verificationToken,
      publicKey: bound.publicKey,
      clientSignature: captured,
    })
    expect(own.status).toBe(200)
    expect(decodeJwtClaims<SessionClaims>(own.body.session).public_key).toBe(bound.publicKey)
  })

  it('gives the session to the key the published clientSignature names, and to no other', async () => {
    const h = await createHarness()
    await account(h, 'bo@example.com')
    const { bound, verificationToken } = await verified(h, 'bo@example.com')
    const session = clientKey()
    const consent = loginConsent(bound, verificationToken, session.publicKey)
    const attacker = clientKey()
    const refusals = [
      // The consent names `session`, not the attacker's key.
      { verificationToken, publicKey: attacker.publicKey, clientSignature: consent },
      // The attacker signs a message naming their key with their own key.
      {
        verificationToken,
        publicKey: attacker.publicKey,
        clientSignature: { ...loginConsent(attacker, verificationToken), publicKey: bound.publicKey },
      },
      // A consent for another token.
      {
        verificationToken,
        publicKey: session.publicKey,
        clientSignature: (() => {
          const message = consent.message.replace(tokenId(verificationToken), crypto.randomUUID())
          return { ...consent, message, signature: bound.sign(message) }
        })(),
      },
      // A sign-up consent is no login consent.
      {
        verificationToken,
        publicKey: session.publicKey,
        clientSignature: signupConsent(bound, verificationToken, {}),
      },
      // No signature at all for a bound token.
      { verificationToken, publicKey: bound.publicKey },
    ]
    for (const body of refusals)
      expect(errorOf(await proxy(h, 'otp_login', body)).errorCode).toBe('CLIENT_SIGNATURE_INVALID')
    // @turnkey/core 1.14 sends the object on v1 /v1/otp_login (raw r‖s), 2.x on /v1/otp_login_v2.
    const login = await proxy(h, 'otp_login', {
      verificationToken,
      publicKey: session.publicKey,
      clientSignature: consent,
    })
    expect(login.status).toBe(200)
    expect(decodeJwtClaims<SessionClaims>(login.body.session).public_key).toBe(session.publicKey)
    expect(
      (
        await h.query(
          'whoami',
          {
            organizationId:
              login.body.session && decodeJwtClaims<SessionClaims>(login.body.session).organization_id,
          },
          { as: session.stamper() },
        )
      ).status,
    ).toBe(200)

    const again = await verified(h, 'bo@example.com')
    expect(
      errorOf(
        await proxy(h, 'otp_login_v2', {
          verificationToken: again.verificationToken,
          publicKey: again.bound.publicKey,
          clientSignature: again.bound.sign(again.verificationToken),
        }),
      ),
    ).toMatchObject({ status: 400, field: 'clientSignature' })
    const v2 = await proxy(h, 'otp_login_v2', {
      verificationToken: again.verificationToken,
      publicKey: again.bound.publicKey,
      clientSignature: {
        ...loginConsent(again.bound, again.verificationToken),
        signature: again.bound.sign(loginConsent(again.bound, again.verificationToken).message, 'der'),
      },
    })
    expect(v2.status).toBe(200)
  })

  it('creates only the account the bound key consented to at sign-up', async () => {
    const h = await createHarness()
    const { bound, verificationToken } = await verified(h, 'cy@example.com')
    const attacker = clientKey()
    const attackerKey = {
      apiKeyName: 'mine',
      publicKey: attacker.publicKey,
      curveType: 'API_KEY_CURVE_P256',
      expirationSeconds: '900',
    }
    const body = { userEmail: 'cy@example.com', verificationToken, apiKeys: [attackerKey] }
    // Intercepted token, no signature; the seed's signature over the token with a foreign key;
    // a consent listing other credentials than the request's.
    expect(errorOf(await proxy(h, 'signup', body))).toEqual({
      status: 401,
      errorCode: 'CLIENT_SIGNATURE_INVALID',
      field: 'clientSignature',
    })
    expect(
      errorOf(await proxy(h, 'signup', { ...body, clientSignature: bound.sign(verificationToken) }))
        .errorCode,
    ).toBe('CLIENT_SIGNATURE_INVALID')
    expect(
      errorOf(
        await proxy(h, 'signup_v2', {
          ...body,
          clientSignature: signupConsent(bound, verificationToken, { email: 'cy@example.com' }),
        }),
      ).errorCode,
    ).toBe('CLIENT_SIGNATURE_INVALID')
    expect(
      (await proxy(h, 'account', { filterType: 'EMAIL', filterValue: 'cy@example.com' })).body.organizationId,
    ).toBeNull()

    // The owner's consent lists exactly these credentials: the account is created (signup_v2 also answers `wallet`).
    const own = {
      apiKeyName: 'session',
      publicKey: bound.publicKey,
      curveType: 'API_KEY_CURVE_P256',
      expirationSeconds: '900',
    }
    const signup = await proxy(h, 'signup_v2', {
      userEmail: 'Cy@Example.com',
      verificationToken,
      apiKeys: [own],
      authenticators: [],
      oauthProviders: [],
      wallet: { walletName: 'Main', accounts: [ETHEREUM_ACCOUNT] },
      clientSignature: signupConsent(bound, verificationToken, { apiKeys: [own], email: 'Cy@Example.com' }),
    })
    expect(signup.status).toBe(200)
    expect(signup.body.wallet).toEqual({ walletId: signup.body.walletId, addresses: signup.body.addresses })
  })

  it('takes @turnkey/core 1.x sign-up consents (`signup` instead of `signupV2`) on v1 /v1/signup', async () => {
    const h = await createHarness()
    const { bound, verificationToken } = await verified(h, 'fin@example.com')
    const message = JSON.stringify({
      signup: { apiKeys: [], authenticators: [], oauthProviders: [], email: 'fin@example.com' },
      tokenId: tokenId(verificationToken),
      type: 'USAGE_TYPE_SIGNUP',
    })
    const consent = {
      message,
      publicKey: bound.publicKey,
      scheme: CLIENT_SIGNATURE_SCHEME,
      signature: bound.sign(message),
    }
    const body = {
      userEmail: 'fin@example.com',
      verificationToken,
      apiKeys: [],
      authenticators: [],
      oauthProviders: [],
    }
    expect((await proxy(h, 'signup', { ...body, clientSignature: consent })).status).toBe(200)
  })

  it('gives an OAuth session only to the key the token was issued for', async () => {
    const h = await createHarness()
    const bound = clientKey()
    const oidcToken = await googleToken(h, bound.publicKey)
    const signup = await proxy(h, 'signup', { oauthProviders: [{ providerName: 'google', oidcToken }] })
    expect(signup.status).toBe(200)
    const attacker = clientKey()
    expect(
      errorOf(await proxy(h, 'oauth_login', { oidcToken, publicKey: attacker.publicKey })),
    ).toMatchObject({
      status: 401,
      errorCode: 'NONCE_MISMATCH',
    })
    expect((await proxy(h, 'oauth_login', { oidcToken, publicKey: bound.publicKey })).status).toBe(200)
  })
})

/** An OIDC token from the dev Google IdP through oauth2_authenticate, its nonce bound to `publicKey`. */
async function googleToken(h: Harness, publicKey: string, email = `${crypto.randomUUID()}@example.com`) {
  const reply = await googleAuthenticate(h, (path, body) => proxy(h, path, body), APP, publicKey, email)
  if (reply.status !== 200) throw new Error(JSON.stringify(reply.body))
  return reply.body.oidcToken as string
}

describe('the published clients’ routes', () => {
  it('answers wallet_kit_client_params and grants the headers the clients send', async () => {
    const h = await createHarness()
    const params = await proxy(h, 'wallet_kit_client_params')
    expect(params).toMatchObject({ status: 200, body: {} })
    for (const path of ['/public/v1/submit/stamp_login', '/v1/otp_init_v2']) {
      const res = await h.service.app.request(path, {
        method: 'OPTIONS',
        headers: {
          Origin: APP,
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers':
            'content-type,x-client-version,x-stamp-attested,x-auth-proxy-config-id',
        },
      })
      expect(res.status).toBe(204)
      const allowed = res.headers.get('access-control-allow-headers')!.toLowerCase().split(/,\s*/)
      for (const header of ['x-client-version', 'x-stamp-attested', 'x-stamp', 'x-auth-proxy-config-id'])
        expect(allowed).toContain(header)
      expect(allowed).toEqual(CORS_ALLOWED_HEADERS.map((name) => name.toLowerCase()))
    }
  })

  it('encrypts the code to a signed target (otp_init_v2 → otp_verify_v2) with the published encryptOtpCodeToBundle', async () => {
    const h = await createHarness()
    const { signerPublicKey } = (await (await h.service.app.request('/public/v1/signer')).json()) as {
      signerPublicKey: string
    }
    const init = await proxy(h, 'otp_init_v2', { otpType: 'OTP_TYPE_EMAIL', contact: 'dee@example.com' })
    expect(init.status).toBe(200)
    const { otpId, otpEncryptionTargetBundle } = init.body
    const envelope = JSON.parse(otpEncryptionTargetBundle)
    expect(envelope).toMatchObject({ version: 'v1.0.0', enclaveQuorumPublic: signerPublicKey })
    const data = JSON.parse(new TextDecoder().decode(hexToBytes(envelope.data)))
    expect(data).toEqual({
      organizationId: h.organizationId,
      otpId,
      targetPublic: expect.stringMatching(/^04[0-9a-f]{128}$/),
    })
    const code = await codeFor(h, 'dee@example.com')
    const bound = clientKey()

    // Without the override the published function checks the production signer key and refuses.
    await expect(encryptOtpCodeToBundle(code, otpEncryptionTargetBundle, bound.publicKey)).rejects.toThrow(
      /expected signer key/,
    )
    const wrong = await encryptOtpCodeToBundle(
      code === '000000' ? '111111' : '000000',
      otpEncryptionTargetBundle,
      bound.publicKey,
      signerPublicKey,
    )
    expect(errorOf(await proxy(h, 'otp_verify_v2', { otpId, encryptedOtpBundle: wrong }))).toMatchObject({
      status: 400,
      errorCode: 'OTP_INVALID',
    })
    expect(
      errorOf(
        await proxy(h, 'otp_verify_v2', {
          otpId,
          encryptedOtpBundle: '{"encappedPublic":"04","ciphertext":"00"}',
        }),
      ),
    ).toEqual({
      status: 400,
      errorCode: 'FIELD_INVALID',
      field: 'encryptedOtpBundle',
    })
    expect(errorOf(await proxy(h, 'otp_verify_v2', { otpId: 'nope', encryptedOtpBundle: wrong })).field).toBe(
      'otpId',
    )
    const encryptedOtpBundle = await encryptOtpCodeToBundle(
      code,
      otpEncryptionTargetBundle,
      bound.publicKey,
      signerPublicKey,
    )
    const verify = await proxy(h, 'otp_verify_v2', { otpId, encryptedOtpBundle })
    expect(verify.status).toBe(200)
    expect(decodeJwtClaims(verify.body.verificationToken)).toMatchObject({
      contact: 'dee@example.com',
      public_key: bound.publicKey,
    })
    // Used: the target is gone and the code too.
    expect((await proxy(h, 'otp_verify_v2', { otpId, encryptedOtpBundle })).status).not.toBe(200)
  })

  it("drops an otp_init_v2 code's encryption target with the code: codes started and never verified leave nothing behind", async () => {
    const h = await createHarness()
    const targets = async () => (await h.service.store.findBy('pluginRows', 'kind', 'otp-target')).length
    for (let i = 0; i < 5; i++)
      expect(
        (await proxy(h, 'otp_init_v2', { otpType: 'OTP_TYPE_EMAIL', contact: `nobody${i}@example.com` }))
          .status,
      ).toBe(200)
    expect(await targets()).toBe(5)
    // Past the codes' lifetime and the 10 minutes their records are kept, the next code sweeps them.
    h.clock.advance(20 * 60_000)
    expect(
      (await proxy(h, 'otp_init_v2', { otpType: 'OTP_TYPE_EMAIL', contact: 'next@example.com' })).status,
    ).toBe(200)
    expect(await h.service.store.findBy('pluginRows', 'kind', 'otp')).toHaveLength(1)
    expect(await targets()).toBe(1)
  })

  it('logs in with X-Stamp-Attested on stamp_login (verification token), once, for the stamping key only', async () => {
    const h = await createHarness()
    const { organizationId } = await account(h, 'eve@example.com')
    const { bound, verificationToken } = await verified(h, 'eve@example.com')
    const body = (publicKey: string, ts = h.clock.now()) =>
      JSON.stringify({
        type: 'ACTIVITY_TYPE_STAMP_LOGIN',
        timestampMs: String(ts),
        organizationId,
        parameters: { publicKey, expirationSeconds: '900', invalidateExisting: false },
      })
    const submit = (text: string, stamp: string) =>
      h.post('/public/v1/submit/stamp_login', text, { [ATTESTED_STAMP_HEADER]: stamp, Origin: APP })

    // Someone else's key cannot use the token: the stamp must be the bound key's.
    const attacker = clientKey()
    expect(
      errorOf(
        await submit(
          body(attacker.publicKey),
          attacker.attested(body(attacker.publicKey), verificationToken),
        ),
      ).errorCode,
    ).toBe('STAMP_INVALID')
    // A stamp over other bytes.
    expect(
      errorOf(
        await submit(body(attacker.publicKey), bound.attested(body(bound.publicKey), verificationToken)),
      ).errorCode,
    ).toBe('STAMP_INVALID')
    // The token vouches for logging in, nothing else.
    const wallet = JSON.stringify({
      type: 'ACTIVITY_TYPE_CREATE_WALLET',
      timestampMs: String(h.clock.now()),
      organizationId,
      parameters: { walletName: 'x', accounts: [] },
    })
    expect(
      errorOf(
        await h.post('/public/v1/submit/create_wallet', wallet, {
          [ATTESTED_STAMP_HEADER]: bound.attested(wallet, verificationToken),
        }),
      ).status,
    ).toBe(403)

    const text = body(bound.publicKey)
    const login = await submit(text, bound.attested(text, verificationToken))
    const { session } = resultOf('stamp_login', login)
    expect(decodeJwtClaims<SessionClaims>(session)).toMatchObject({
      public_key: bound.publicKey,
      organization_id: organizationId,
    })
    // One login per token.
    const second = body(bound.publicKey, h.clock.now() + 1)
    expect(errorOf(await submit(second, bound.attested(second, verificationToken))).errorCode).toBe(
      'VERIFICATION_TOKEN_INVALID',
    )

    // loginWithOtp without organizationId names the parent: the account is found by the contact.
    const next = await verified(h, 'eve@example.com')
    const parentBody = JSON.stringify({
      type: 'ACTIVITY_TYPE_STAMP_LOGIN',
      timestampMs: String(h.clock.now()),
      organizationId: h.organizationId,
      parameters: { publicKey: next.bound.publicKey },
    })
    const viaParent = await submit(parentBody, next.bound.attested(parentBody, next.verificationToken))
    expect(decodeJwtClaims<SessionClaims>(resultOf('stamp_login', viaParent).session)).toMatchObject({
      public_key: next.bound.publicKey,
      organization_id: organizationId,
    })
    // No account for the contact: not found (never the parent organization itself).
    const stranger = await verified(h, 'nobody@example.com')
    const strangerBody = parentBody.replace(next.bound.publicKey, stranger.bound.publicKey)
    expect(
      errorOf(await submit(strangerBody, stranger.bound.attested(strangerBody, stranger.verificationToken))),
    ).toMatchObject({ status: 404, errorCode: 'USER_NOT_FOUND' })
  })

  it('logs in with X-Stamp-Attested on stamp_login (OIDC token)', async () => {
    const h = await createHarness()
    const bound = clientKey()
    const oidcToken = await googleToken(h, bound.publicKey)
    const { organizationId } = (
      await proxy(h, 'signup_v2', {
        oauthProviders: [{ providerName: 'google', oidcToken }],
        apiKeys: [],
        authenticators: [],
      })
    ).body
    const text = JSON.stringify({
      type: 'ACTIVITY_TYPE_STAMP_LOGIN',
      timestampMs: String(h.clock.now()),
      organizationId,
      parameters: { publicKey: bound.publicKey },
    })
    const other = clientKey()
    expect(
      errorOf(
        await h.post('/public/v1/submit/stamp_login', text, {
          [ATTESTED_STAMP_HEADER]: other.attested(text, oidcToken, 'STAMP_ATTESTED_SCHEME_P256_OIDC'),
        }),
      ).errorCode,
    ).toBe('NONCE_MISMATCH')
    const login = await h.post('/public/v1/submit/stamp_login', text, {
      [ATTESTED_STAMP_HEADER]: bound.attested(text, oidcToken, 'STAMP_ATTESTED_SCHEME_P256_OIDC'),
    })
    expect(decodeJwtClaims<SessionClaims>(resultOf('stamp_login', login).session).public_key).toBe(
      bound.publicKey,
    )
  })

  it('signs one payload (sign_raw_payload V2) and lists accounts with their wallet details', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization({
      wallet: { walletName: 'Main', accounts: [ETHEREUM_ACCOUNT] },
    })
    const [key] = sub.keys
    const address = sub.addresses![0]!
    const message = 'hello from the published client'
    const prefixed = utf8ToBytes(`\x19Ethereum Signed Message:\n${message.length}${message}`)
    const hash = bytesToHex(keccak_256(prefixed))
    const signed = await h.submit(
      'sign_raw_payload',
      {
        signWith: address,
        payload: `0x${hash}`,
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      },
      { as: key, organizationId: sub.organizationId },
    )
    expect(signed.body.activity.type).toBe('ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2')
    const { r, s, v } = resultOf('sign_raw_payload', signed)
    const recovered = secp256k1.Signature.fromBytes(hexToBytes(`${r}${s}`), 'compact')
      .addRecoveryBit(Number.parseInt(v, 16))
      .recoverPublicKey(hexToBytes(hash))
      .toBytes(false)
    expect(`0x${bytesToHex(keccak_256(recovered.slice(1)).slice(-20))}`).toBe(address.toLowerCase())
    expect(
      errorOf(
        await h.submit(
          'sign_raw_payload',
          {
            signWith: address,
            payload: 'ab',
            encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
            hashFunction: 'HASH_FUNCTION_NO_OP',
          },
          { as: key, organizationId: sub.organizationId },
        ),
      ),
    ).toMatchObject({ status: 400, field: 'parameters.payload' })

    const listed = await h.query(
      'list_wallet_accounts',
      { includeWalletDetails: true, paginationOptions: { limit: '100' } },
      { as: key, organizationId: sub.organizationId },
    )
    expect(listed.status).toBe(200)
    expect(listed.body.accounts).toEqual([
      expect.objectContaining({
        address,
        walletId: sub.walletId,
        walletDetails: expect.objectContaining({
          walletId: sub.walletId,
          walletName: 'Main',
          exported: false,
          imported: false,
        }),
      }),
    ])
    const plain = await h.query('list_wallet_accounts', {}, { as: key, organizationId: sub.organizationId })
    expect(plain.body.accounts[0]).not.toHaveProperty('walletDetails')
  })
})
