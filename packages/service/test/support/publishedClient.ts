// What the tests of the published clients' sign-ins share: a browser's client key as they keep it,
// with the `X-Stamp-Attested` header they build, and the dev Google IdP's sign-in as a page at an
// app's origin goes through it (to an OIDC token bound to a key by its nonce).
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { base64urlnopad } from '@scure/base'
import { oidcNonce } from '../../src/signin/oauth/oidcNonce.ts'
import { s256Challenge } from '../../src/signin/oauth/pkce.ts'
import { type Harness, type Json, testKey } from '../../src/testing/harness.ts'

/** A client key pair as the published clients keep it (P-256, compressed public key hex). */
export function clientKey() {
  const privateKey = p256.utils.randomSecretKey()
  const publicKey = bytesToHex(p256.getPublicKey(privateKey, true))
  const sign = (text: string, format: 'compact' | 'der' = 'compact') =>
    bytesToHex(p256.sign(utf8ToBytes(text), privateKey, { prehash: true, format }))
  return {
    privateKey,
    publicKey,
    sign,
    stamper: () => testKey('SIGNATURE_SCHEME_TK_API_P256', privateKey),
    /** `X-Stamp-Attested` as @turnkey/core 2.8's AttestedStamper builds it. */
    attested: (body: string, token: string, scheme = 'STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN') =>
      base64urlnopad.encode(
        utf8ToBytes(
          JSON.stringify({ publicKeyAttestation: token, scheme, publicKey, signature: sign(body, 'der') }),
        ),
      ),
  }
}
export type ClientKey = ReturnType<typeof clientKey>

/**
 * `email`'s sign-in at the dev Google IdP as a page at `app` makes it (PKCE, the OIDC nonce bound to
 * `publicKey`), then `oauth2_authenticate` through `proxy`: its answer (the OIDC token once 200).
 */
export async function googleAuthenticate(
  h: Harness,
  proxy: (path: string, body: unknown) => Promise<{ status: number; body: Json }>,
  app: string,
  publicKey: string,
  email: string,
): Promise<{ status: number; body: Json }> {
  const config = (await proxy('wallet_kit_config', {})).body
  const verifier = 'verifier-'.repeat(5)
  const redirectUri = `${app}/oauth/callback`
  const nonce = oidcNonce(publicKey)
  const url = new URL(config.oauthAuthorizationEndpoints.google)
  const params = {
    response_type: 'code',
    client_id: config.oauthClientIds.google,
    redirect_uri: redirectUri,
    state: 'xyz',
    nonce,
    code_challenge: s256Challenge(verifier),
    code_challenge_method: 'S256',
    scope: 'openid email profile',
  }
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
  const html = await (await h.service.app.request(`${url.pathname}${url.search}`)).text()
  const fields = Object.fromEntries(
    [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]),
  )
  const post = await h.service.app.request(url.pathname, {
    method: 'POST',
    body: new URLSearchParams({ ...fields, email, name: 'Grace', action: 'continue' }),
  })
  return proxy('oauth2_authenticate', {
    provider: 'OAUTH2_PROVIDER_GOOGLE',
    authCode: new URL(post.headers.get('location')!).searchParams.get('code')!,
    redirectUri,
    codeVerifier: verifier,
    nonce,
    clientId: config.oauthClientIds.google,
  })
}
