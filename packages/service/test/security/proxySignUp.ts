// A passkey sign-up through the auth proxy as a published client makes it (`signUpWithPasskey`):
// the passkey, and the session keys registered beside it, each with a lifetime.
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { expect } from 'vitest'
import { type Harness, type SoftPasskey, type TestKey, testKey } from '../../src/testing/harness.ts'

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
