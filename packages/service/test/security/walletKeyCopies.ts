// What the tests of a wallet key's copies share: the auth proxy's anonymous calls as the kit makes
// them from the dev app's origin, and copies of a public key (no secret) that one attacker
// registers on users of its own sub-organization.
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { type Harness, resultOf, type TestKey } from '../../src/testing/harness.ts'

/** An auth-proxy call (`POST /v1/<path>` with the dev proxy config) from `http://localhost:5173` at the client `address`. */
export async function proxyPost(
  h: Harness,
  path: string,
  body: unknown,
  address: string,
): Promise<{ status: number; body: unknown }> {
  const reply = await h.service.app.request(
    `/v1/${path}`,
    {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
        Origin: 'http://localhost:5173',
      },
      body: JSON.stringify(body),
    },
    { incoming: { socket: { remoteAddress: address } } },
  )
  return { status: reply.status, body: await reply.json() }
}

/**
 * `count` users of one attacker's sub-organization, each holding `key` as an API key named
 * `apiKeyName(i)` (create_users, 100 a call, the service's clock a millisecond on before each).
 */
export async function keyCopies(
  h: Harness,
  key: TestKey,
  count: number,
  apiKeyName: (i: number) => string,
): Promise<void> {
  const attacker = await h.createSubOrganization({ name: 'attacker' })
  for (let made = 0; made < count; made += 100) {
    h.clock.advance(1)
    resultOf(
      'create_users',
      await h.submit(
        'create_users',
        {
          users: Array.from({ length: Math.min(100, count - made) }, (_, i) => ({
            userName: `u${made + i}`,
            apiKeys: [key.apiKey(apiKeyName(made + i))],
            authenticators: [],
            oauthProviders: [],
          })),
        },
        { as: attacker.keys[0]!, organizationId: attacker.organizationId },
      ),
    )
  }
}
