import {
  CLIENT_SIGNATURE_SCHEME,
  clientSignatureMessage,
  decodeJwtClaims,
  PROXY_CONFIG_HEADER,
} from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { encryptOtpCodeToBundle } from '@turnkey/crypto'
import { describe, expect, it } from 'vitest'
import { oidcNonce } from '../signin/oauth/oidcNonce.ts'
import { signInState } from '../signin/signInState.ts'
import { createHarness, type Harness, type Json, type Reply, resultOf, testKey } from '../testing/harness.ts'
import { latestCode } from '../testing/latestCode.ts'

const errorOf = (reply: Reply) => ({
  status: reply.status,
  errorCode: reply.body.details?.errorCode,
  field: reply.body.details?.field,
})

/** A client key pair as the published clients keep it (P-256, compressed public key hex). */
function clientKey() {
  const privateKey = p256.utils.randomSecretKey()
  return {
    publicKey: bytesToHex(p256.getPublicKey(privateKey, true)),
    sign: (text: string) => bytesToHex(p256.sign(utf8ToBytes(text), privateKey, { prehash: true })),
  }
}

/**
 * An OIDC token as `oauth2_authenticate` issues it, for a session key `publicKey`: run in the dev
 * organization's tree, or in the top-level organization `org`.
 */
function oidcToken(h: Harness, sub: string, publicKey: string, aud = 'client-web', org = h.organizationId) {
  return signInState(h.service.runtime).oidc.issue({
    sub,
    aud,
    nonce: oidcNonce(publicKey),
    provider: 'OAUTH2_PROVIDER_GOOGLE',
    idp_iss: 'https://accounts.google.com',
    org,
    email: `${sub}@example.com`,
  }).token
}

/**
 * The `oidcClaims` naming the identity of `token`, as an app copies them from the provider's own
 * token: the provider's issuer (the service's token carries it as `idp_iss`; its own `iss` names no
 * provider and is refused as `oidcClaims.iss`), the subject and the audience.
 */
function claimsOf(token: string) {
  const { idp_iss, sub, aud } = decodeJwtClaims<{ idp_iss: string; sub: string; aud: string }>(token)
  return { iss: idp_iss, sub, aud }
}

/** A browser page calling the dev auth proxy (`/v1/<path>`). */
async function proxy(h: Harness, path: string, body: unknown): Promise<Reply> {
  const res = await h.service.app.request(`/v1/${path}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
      Origin: 'http://app.test',
    },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as Json }
}

const rootUser = (extra: Record<string, unknown> = {}) => ({
  userName: 'Root',
  apiKeys: [],
  authenticators: [],
  oauthProviders: [],
  ...extra,
})

describe('CREATE_SUB_ORGANIZATION_V8', () => {
  it('takes oidcClaims: the new root user then logs in with an OIDC token of that identity', async () => {
    const h = await createHarness()
    const session = clientKey()
    const token = oidcToken(h, 'v8-user', session.publicKey)
    const reply = await h.submit(
      'create_sub_organization',
      {
        subOrganizationName: 'Claimed',
        rootQuorumThreshold: 1,
        rootUsers: [rootUser({ oauthProviders: [{ providerName: 'google', oidcClaims: claimsOf(token) }] })],
      },
      { type: 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8' },
    )
    expect(reply.status).toBe(200)
    expect(reply.body.activity.type).toBe('ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8')
    expect(Object.keys(reply.body.activity.intent)).toEqual(['createSubOrganizationIntentV8'])
    const result = reply.body.activity.result.createSubOrganizationResultV8
    expect(result).toEqual({ subOrganizationId: expect.any(String), rootUserIds: [expect.any(String)] })

    const login = await proxy(h, 'oauth_login', { oidcToken: token, publicKey: session.publicKey })
    expect(login.status).toBe(200)
    expect(decodeJwtClaims<{ organization_id: string; user_id: string }>(login.body.session)).toMatchObject({
      organization_id: result.subOrganizationId,
      user_id: result.rootUserIds[0],
    })
    // Another token of that identity for another audience is the same account.
    const other = clientKey()
    const sameIdentity = oidcToken(h, 'v8-user', other.publicKey, 'client-ios')
    expect(
      (await proxy(h, 'oauth_login', { oidcToken: sameIdentity, publicKey: other.publicKey })).status,
    ).toBe(200)
    // One account per identity: a second sub-organization cannot claim it.
    expect(
      errorOf(
        await h.submit(
          'create_sub_organization',
          {
            subOrganizationName: 'Again',
            rootQuorumThreshold: 1,
            rootUsers: [
              rootUser({ oauthProviders: [{ providerName: 'google', oidcClaims: claimsOf(token) }] }),
            ],
          },
          { type: 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8' },
        ),
      ),
    ).toEqual({
      status: 409,
      errorCode: 'ALREADY_EXISTS',
      field: 'parameters.rootUsers[0].oauthProviders[0].oidcClaims',
    })
  })

  it("a token another top-level organization's sign-in issued logs in, signs up and links nowhere here", async () => {
    // A deployment holding a second operator's organization, whose auth-proxy settings name a
    // provider of its own: its issuer and key set are whatever that operator chose, so the
    // service's token for it can name any person at Google. Here it names a person with an
    // account in the dev organization's tree.
    const h = await createHarness()
    const other = 'org-another-operator'
    await h.service.store.transaction((tx) =>
      tx.put('organizations', {
        id: other,
        name: 'Another operator',
        rootUserIds: [],
        rootQuorumThreshold: 1,
        createdAt: 0,
        updatedAt: 0,
      }),
    )
    const session = clientKey()
    const own = oidcToken(h, 'victim', session.publicKey)
    const created = await h.submit(
      'create_sub_organization',
      {
        subOrganizationName: 'Victim',
        rootQuorumThreshold: 1,
        rootUsers: [rootUser({ oauthProviders: [{ providerName: 'google', oidcClaims: claimsOf(own) }] })],
      },
      { type: 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8' },
    )
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    const { subOrganizationId } = created.body.activity.result.createSubOrganizationResultV8

    const attacker = clientKey()
    const foreign = oidcToken(h, 'victim', attacker.publicKey, 'client-web', other)
    const refused = { errorCode: 'OIDC_TOKEN_INVALID', field: 'parameters.oidcToken' }
    // The auth proxy, the activity API in the sub-organization, and in the parent for it.
    expect(
      errorOf(await proxy(h, 'oauth_login', { oidcToken: foreign, publicKey: attacker.publicKey })),
    ).toMatchObject({ errorCode: 'OIDC_TOKEN_INVALID' })
    for (const organizationId of [subOrganizationId, h.organizationId]) {
      const login = await h.submit('oauth_login', {
        organizationId,
        oidcToken: foreign,
        publicKey: attacker.publicKey,
      })
      expect(errorOf(login)).toMatchObject(refused)
      expect(login.body.details?.message ?? login.body.message).toMatch(/another organization/)
    }
    // Nor does it sign up a new account with that identity, or link it to an account here.
    const signUp = await h.submit('create_sub_organization', {
      subOrganizationName: 'Impostor',
      rootQuorumThreshold: 1,
      rootUsers: [rootUser({ oauthProviders: [{ providerName: 'google', oidcToken: foreign }] })],
    })
    expect(errorOf(signUp)).toMatchObject({
      errorCode: 'OIDC_TOKEN_INVALID',
      field: 'parameters.rootUsers[0].oauthProviders[0].oidcToken',
    })
    // The same person's token from this organization's own sign-in logs in.
    const login = await h.submit(
      'oauth_login',
      { oidcToken: own, publicKey: session.publicKey },
      { organizationId: subOrganizationId },
    )
    expect(login.status, JSON.stringify(login.body)).toBe(200)
    expect(
      decodeJwtClaims<{ organization_id: string }>(resultOf('oauth_login', login).session).organization_id,
    ).toBe(subOrganizationId)
  })

  it("refuses oidcClaims from the auth proxy's user, which forwards what a browser sends", async () => {
    const h = await createHarness()
    const config = (await h.service.store.get('proxyConfigs', h.service.dev.authProxyConfigId!))!
    const proxyKey = testKey(
      'SIGNATURE_SCHEME_TK_API_P256',
      h.service.runtime.open(config.sealedProxyPrivateKey!),
    )
    const token = oidcToken(h, 'stranger', clientKey().publicKey)
    const reply = await h.submit(
      'create_sub_organization',
      {
        subOrganizationName: 'Stranger',
        rootQuorumThreshold: 1,
        rootUsers: [rootUser({ oauthProviders: [{ providerName: 'google', oidcClaims: claimsOf(token) }] })],
      },
      { type: 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8', as: proxyKey },
    )
    expect(errorOf(reply)).toEqual({
      status: 403,
      errorCode: 'PERMISSION_DENIED',
      field: 'parameters.rootUsers[0].oauthProviders[0].oidcClaims',
    })
  })

  it('refuses oidcClaims in V7, and an oidcToken with oidcClaims in V8, naming the field', async () => {
    const h = await createHarness()
    const token = oidcToken(h, 'mixed', clientKey().publicKey)
    const withClaims = {
      subOrganizationName: 'Mixed',
      rootQuorumThreshold: 1,
      rootUsers: [
        rootUser({
          oauthProviders: [{ providerName: 'google', oidcToken: token, oidcClaims: claimsOf(token) }],
        }),
      ],
    }
    expect(errorOf(await h.submit('create_sub_organization', withClaims))).toEqual({
      status: 400,
      errorCode: 'FIELD_INVALID',
      field: 'parameters.rootUsers[0].oauthProviders[0].oidcClaims',
    })
    expect(
      errorOf(
        await h.submit('create_sub_organization', withClaims, {
          type: 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8',
        }),
      ),
    ).toEqual({
      status: 400,
      errorCode: 'FIELD_INVALID',
      field: 'parameters.rootUsers[0].oauthProviders[0].oidcClaims',
    })
  })
})

describe('CREATE_USERS_V4', () => {
  it('takes oidcClaims in a top-level organization: the user then logs in with a token of that identity', async () => {
    const h = await createHarness()
    const session = clientKey()
    const token = oidcToken(h, 'v4-user', session.publicKey, 'client-backend')
    const reply = await h.submit(
      'create_users',
      {
        users: [
          {
            ...rootUser({ userName: 'Claimed user' }),
            oauthProviders: [{ providerName: 'google', oidcClaims: claimsOf(token) }],
            userTags: [],
          },
        ],
      },
      { type: 'ACTIVITY_TYPE_CREATE_USERS_V4' },
    )
    expect(Object.keys(reply.body.activity.intent)).toEqual(['createUsersIntentV4'])
    const { userIds } = reply.body.activity.result.createUsersResult
    const login = await h.submit('oauth_login', { oidcToken: token, publicKey: session.publicKey })
    expect(login.status).toBe(200)
    expect(decodeJwtClaims<{ user_id: string }>(resultOf('oauth_login', login).session).user_id).toBe(
      userIds[0],
    )
  })

  it('refuses oidcClaims in V3 (400) and in a sub-organization (403), naming the field', async () => {
    const h = await createHarness()
    const token = oidcToken(h, 'v3-user', clientKey().publicKey)
    const users = [
      {
        ...rootUser(),
        oauthProviders: [{ providerName: 'google', oidcClaims: claimsOf(token) }],
        userTags: [],
      },
    ]
    expect(errorOf(await h.submit('create_users', { users }))).toEqual({
      status: 400,
      errorCode: 'FIELD_INVALID',
      field: 'parameters.users[0].oauthProviders[0].oidcClaims',
    })
    const sub = await h.createSubOrganization()
    expect(
      errorOf(
        await h.submit(
          'create_users',
          { users },
          { type: 'ACTIVITY_TYPE_CREATE_USERS_V4', as: sub.keys[0]!, organizationId: sub.organizationId },
        ),
      ),
    ).toEqual({
      status: 403,
      errorCode: 'PERMISSION_DENIED',
      field: 'parameters.users[0].oauthProviders[0].oidcClaims',
    })
  })
})

describe('INIT_OTP_V2 / INIT_OTP_V3 / VERIFY_OTP_V2', () => {
  it('V2 takes appName at the top (required) and refuses it in emailCustomization; V1 the reverse', async () => {
    const h = await createHarness()
    const otp = { otpType: 'OTP_TYPE_EMAIL', contact: 'v2@example.com' }
    const v2 = { type: 'ACTIVITY_TYPE_INIT_OTP_V2' }
    const reply = await h.submit('init_otp', { ...otp, appName: 'Shop' }, v2)
    expect(reply.status).toBe(200)
    expect(Object.keys(reply.body.activity.intent)).toEqual(['initOtpIntentV2'])
    expect(reply.body.activity.result).toEqual({ initOtpResult: { otpId: expect.any(String) } })
    expect(errorOf(await h.submit('init_otp', otp, v2))).toEqual({
      status: 400,
      errorCode: 'FIELD_REQUIRED',
      field: 'parameters.appName',
    })
    expect(
      errorOf(
        await h.submit('init_otp', { ...otp, appName: 'Shop', emailCustomization: { appName: 'Shop' } }, v2),
      ),
    ).toEqual({ status: 400, errorCode: 'FIELD_INVALID', field: 'parameters.emailCustomization.appName' })
    expect(errorOf(await h.submit('init_otp', { ...otp, appName: 'Shop' }))).toEqual({
      status: 400,
      errorCode: 'FIELD_INVALID',
      field: 'parameters.appName',
    })
  })

  it('V3 answers a signed target; VERIFY_OTP_V2 opens the code encrypted to it and binds its key', async () => {
    const h = await createHarness()
    const contact = 'v3@example.com'
    const init = await h.submit(
      'init_otp',
      { otpType: 'OTP_TYPE_EMAIL', contact, appName: 'Shop' },
      { type: 'ACTIVITY_TYPE_INIT_OTP_V3' },
    )
    expect(Object.keys(init.body.activity.intent)).toEqual(['initOtpIntentV3'])
    const { otpId, otpEncryptionTargetBundle } = init.body.activity.result.initOtpResultV2
    const code = await latestCode(h.service, contact)
    const bound = clientKey()
    const encryptedOtpBundle = await encryptOtpCodeToBundle(
      code,
      otpEncryptionTargetBundle,
      bound.publicKey,
      h.service.dev.signerPublicKey,
    )
    const v2 = { type: 'ACTIVITY_TYPE_VERIFY_OTP_V2' }
    expect(errorOf(await h.submit('verify_otp', { otpId, encryptedOtpBundle, otpCode: code }, v2))).toEqual({
      status: 400,
      errorCode: 'FIELD_INVALID',
      field: 'parameters.otpCode',
    })
    expect(errorOf(await h.submit('verify_otp', { otpId, otpCode: code, encryptedOtpBundle }))).toEqual({
      status: 400,
      errorCode: 'FIELD_INVALID',
      field: 'parameters.encryptedOtpBundle',
    })
    const verify = await h.submit('verify_otp', { otpId, encryptedOtpBundle }, v2)
    expect(Object.keys(verify.body.activity.intent)).toEqual(['verifyOtpIntentV2'])
    const { verificationToken } = verify.body.activity.result.verifyOtpResult
    expect(decodeJwtClaims<{ contact: string; public_key: string }>(verificationToken)).toMatchObject({
      contact,
      public_key: bound.publicKey,
    })
    // The target is spent with the code (a later request, not a replay of this one).
    h.clock.advance(1000)
    expect(errorOf(await h.submit('verify_otp', { otpId, encryptedOtpBundle }, v2))).toMatchObject({
      field: 'parameters.otpId',
    })
  })
})

describe('OTP_LOGIN_V2', () => {
  it('requires the published clientSignature object and then gives a session', async () => {
    const h = await createHarness()
    const contact = 'login-v2@example.com'
    const created = await h.submit('create_sub_organization', {
      subOrganizationName: 'OTP user',
      rootQuorumThreshold: 1,
      rootUsers: [rootUser({ userEmail: contact, apiKeys: [testKey().apiKey('key')] })],
    })
    const sub = resultOf('create_sub_organization', created)
    const user = sub.rootUserIds[0]
    const init = await h.submit('init_otp', { otpType: 'OTP_TYPE_EMAIL', contact })
    const bound = clientKey()
    const verify = await h.submit('verify_otp', {
      otpId: resultOf('init_otp', init).otpId,
      otpCode: await latestCode(h.service, contact),
      publicKey: bound.publicKey,
    })
    const verificationToken = resultOf('verify_otp', verify).verificationToken as string
    const session = clientKey()
    const message = clientSignatureMessage({
      type: 'USAGE_TYPE_LOGIN',
      tokenId: decodeJwtClaims<{ id: string }>(verificationToken).id,
      login: { publicKey: session.publicKey },
    })
    const v2 = { type: 'ACTIVITY_TYPE_OTP_LOGIN_V2', organizationId: sub.subOrganizationId }
    const login = { verificationToken, publicKey: session.publicKey }
    expect(errorOf(await h.submit('otp_login', login, v2))).toEqual({
      status: 400,
      errorCode: 'FIELD_REQUIRED',
      field: 'parameters.clientSignature',
    })
    // The seed's V1 hex signature is not V2's.
    expect(
      errorOf(await h.submit('otp_login', { ...login, clientSignature: bound.sign(verificationToken) }, v2)),
    ).toEqual({ status: 400, errorCode: 'FIELD_INVALID', field: 'parameters.clientSignature' })
    const reply = await h.submit(
      'otp_login',
      {
        ...login,
        clientSignature: {
          message,
          publicKey: bound.publicKey,
          scheme: CLIENT_SIGNATURE_SCHEME,
          signature: bound.sign(message),
        },
      },
      v2,
    )
    expect(Object.keys(reply.body.activity.intent)).toEqual(['otpLoginIntentV2'])
    expect(
      decodeJwtClaims<{ user_id: string }>(reply.body.activity.result.otpLoginResult.session).user_id,
    ).toBe(user)
  })
})

describe('CREATE_API_KEYS_V2 / CREATE_AUTHENTICATORS_V2', () => {
  it('takes API keys as V2 and answers createApiKeysResult', async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization()
    const key = testKey('SIGNATURE_SCHEME_TK_API_SECP256K1')
    const reply = await h.submit(
      'create_api_keys',
      { userId: sub.userIds[0], apiKeys: [key.apiKey('server')] },
      { type: 'ACTIVITY_TYPE_CREATE_API_KEYS_V2', as: sub.keys[0]!, organizationId: sub.organizationId },
    )
    expect(Object.keys(reply.body.activity.intent)).toEqual(['createApiKeysIntentV2'])
    expect(reply.body.activity.result.createApiKeysResult.apiKeyIds).toHaveLength(1)
  })

  it("refuses V1's per-authenticator userId in V2, naming the field", async () => {
    const h = await createHarness()
    const sub = await h.createSubOrganization()
    const userId = sub.userIds[0]
    const authenticator = {
      authenticatorName: 'Laptop',
      userId,
      challenge: 'abc',
      attestation: { credentialId: 'aa', clientDataJson: 'bb', attestationObject: 'cc', transports: [] },
    }
    expect(
      errorOf(
        await h.submit(
          'create_authenticators',
          { userId, authenticators: [authenticator] },
          {
            type: 'ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2',
            as: sub.keys[0]!,
            organizationId: sub.organizationId,
          },
        ),
      ),
    ).toEqual({ status: 400, errorCode: 'FIELD_INVALID', field: 'parameters.authenticators[0].userId' })
  })
})
