// A passkey sign-up through the auth proxy as a published client makes it (`signUpWithPasskey`):
// the passkey, and the session keys registered beside it, each with a lifetime. And any other
// auth-proxy call, from a given address.
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { expect } from 'vitest'
import {
  type Harness,
  type Json,
  type SoftPasskey,
  type TestKey,
  testKey,
} from '../../src/testing/harness.ts'

/** An auth-proxy call (`POST /v1/<path>` with the dev proxy config) from the client `address`. */
export async function proxyCall(h: Harness, path: string, body: unknown, address: string) {
  const res = await h.service.app.request(
    `/v1/${path}`,
    {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
        Origin: 'http://app.test',
      },
      body: JSON.stringify(body),
    },
    { incoming: { socket: { remoteAddress: address } } },
  )
  return { status: res.status, body: (await res.json()) as Json }
}

export async function proxySignUpWithPasskey(
  h: Harness,
  passkey: SoftPasskey,
  sessions: TestKey[] = [testKey()],
): Promise<{ organizationId: string; sessions: TestKey[] }> {
  const res = await h.service.app.request('/v1/signup', {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
      Origin: 'http://app.test',
    },
    body: JSON.stringify({
      userName: 'signed up',
      authenticators: [passkey.register(undefined, 'Phone')],
      apiKeys: sessions.map((session, index) => ({
        apiKeyName: sessions.length === 1 ? 'session' : `session ${index}`,
        publicKey: session.publicKey,
        curveType: 'API_KEY_CURVE_P256',
        expirationSeconds: '900',
      })),
      oauthProviders: [],
    }),
  })
  const reply = (await res.json()) as { organizationId: string }
  expect(res.status, JSON.stringify(reply)).toBe(200)
  return { organizationId: reply.organizationId, sessions }
}

/**
 * Shows `passkey` in an activity's record before anyone registers it, as a registration of it that
 * failed shows it (here one naming a user that is not there): whoever reads the record can register
 * a copy, so every registration of it from now on is a possible copy (kernel/passkeySightings.ts).
 */
export async function showPasskey(h: Harness, passkey: SoftPasskey): Promise<void> {
  h.clock.advance(1)
  const failed = await h.submit('create_authenticators', {
    userId: 'not-a-user',
    authenticators: [passkey.register(undefined, 'Phone')],
  })
  expect(failed.status, JSON.stringify(failed.body)).toBe(404)
}
