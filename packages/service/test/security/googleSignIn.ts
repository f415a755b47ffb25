// What the OIDC "not in records" tests share: the app's Google client at a real OIDC provider
// (test/oauth/startOidcProvider.ts), the service's settings for it, the auth proxy as a page calls
// it, and a browser's session key with its OIDC nonce.
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { expect } from 'vitest'
import type { CreateServiceOptions } from '../../src/assembly/createService.ts'
import { oidcNonce } from '../../src/signin/oauth/oidcNonce.ts'
import { type Harness, type Json, type TestKey, testKey } from '../../src/testing/harness.ts'
import type { OidcProvider } from '../oauth/startOidcProvider.ts'

export const APP = 'http://app.test'
export const REDIRECT = 'http://app.test/oauth/callback'
/** The app's confidential client at the provider. */
export const CLIENT = {
  client_id: 'latchkey-app',
  client_secret: 'a-confidential-secret-of-the-app',
  redirect_uris: [REDIRECT],
}

/** The service's settings for Google at `provider`. */
export const googleAt = (provider: OidcProvider): CreateServiceOptions['oauth'] => ({
  providers: {
    google: {
      clientId: CLIENT.client_id,
      clientSecret: CLIENT.client_secret,
      redirectUris: [REDIRECT],
      issuer: provider.issuer,
    },
  },
})

/** The auth proxy's `/v1/<path>`, called as the app's page calls it. */
export function proxyOf(h: Harness) {
  return async (path: string, body: object) => {
    const response = await h.service.app.request(`/v1/${path}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Origin: APP,
        [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
      },
      body: JSON.stringify(body),
    })
    return { status: response.status, body: (await response.json()) as Json & Record<string, Json> }
  }
}

/** A browser's session key: the kit keeps the private key; the OIDC nonce is bound to its public key. */
export function clientKey(): TestKey & { nonce: string } {
  const privateKey = p256.utils.randomSecretKey()
  const key = testKey('SIGNATURE_SCHEME_TK_API_P256', privateKey)
  expect(key.publicKey).toBe(bytesToHex(p256.getPublicKey(privateKey, true)))
  return Object.assign(key, { nonce: oidcNonce(key.publicKey) })
}
