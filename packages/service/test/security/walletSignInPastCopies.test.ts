// A wallet sign-in names the parent organization (the client does not know its sub-organization
// yet), and the service finds the account among the key's holders under that parent. It read the
// first 50 holders of the key across every organization, in creation order, and only then kept
// those under the parent: registrations of a victim's public wallet key (it is no secret) made
// before the victim's own account filled the window, and the victim's wallet sign-in was refused
// for good. The holders are now read through the index of registered keys, proven apart from
// unproven, newest unproven first: copies made before an account, however many, neither hide it
// nor cost the sign-in more reads.
import { decodeJwtClaims, PROXY_CONFIG_HEADER, type SessionClaims } from '@latchkey/protocol'
import { afterEach, expect, it, vi } from 'vitest'
import { createHarness, type Harness, resultOf, type TestKey, testKey } from '../../src/testing/harness.ts'
import { countRowsRead } from './rowsRead.ts'

afterEach(() => {
  vi.restoreAllMocks()
})

async function signUp(h: Harness, keys: TestKey[], address: string): Promise<string> {
  const reply = await h.service.app.request(
    '/v1/signup',
    {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
        Origin: 'http://localhost:5173',
      },
      body: JSON.stringify({
        userName: 'wallet user',
        apiKeys: keys.map((k) => k.apiKey(`wallet-auth:${k.publicKey}`)),
      }),
    },
    { incoming: { socket: { remoteAddress: address } } },
  )
  const body = (await reply.json()) as { organizationId: string }
  expect(reply.status, JSON.stringify(body)).toBe(200)
  return body.organizationId
}

async function walletLogin(h: Harness, wallet: TestKey) {
  const reply = await h.submit('stamp_login', { publicKey: testKey().publicKey }, { as: wallet })
  if (reply.status !== 200) return { status: reply.status, message: String(reply.body.message) }
  return {
    status: 200,
    organizationId: decodeJwtClaims<SessionClaims>(resultOf('stamp_login', reply).session).organization_id,
  }
}

/** `count` users of one attacker's sub-organization, each holding `key` (create_users, 100 a call). */
async function copiesInOneSubOrganization(h: Harness, key: TestKey, count: number) {
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
            apiKeys: [key.apiKey(`wallet ${made + i}`)],
            authenticators: [],
            oauthProviders: [],
          })),
        },
        { as: attacker.keys[0]!, organizationId: attacker.organizationId },
      ),
    )
  }
}

it('control: with 49 earlier registrations the victim signs in', async () => {
  const h = await createHarness()
  const victimWallet = testKey('SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191')
  for (let i = 0; i < 49; i++) {
    h.clock.advance(60_000)
    await signUp(h, [victimWallet, testKey()], `203.0.${i}.7`)
  }
  h.clock.advance(60_000)
  const victim = await signUp(h, [victimWallet], '198.51.100.9')
  expect(await walletLogin(h, victimWallet)).toEqual({ status: 200, organizationId: victim })
}, 120_000)

it("50 anonymous sign-ups registering a victim's public wallet key before its own do not lock the victim out of wallet sign-in", async () => {
  const h = await createHarness()
  const victimWallet = testKey('SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191')
  // The attacker: 50 anonymous sign-ups, each with the victim's (public) key beside a key of their own.
  for (let i = 0; i < 50; i++) {
    h.clock.advance(60_000)
    await signUp(h, [victimWallet, testKey()], `203.0.${i}.7`)
  }
  // The victim signs up at the app with its wallet, then signs in as the kit does.
  h.clock.advance(60_000)
  const victim = await signUp(h, [victimWallet], '198.51.100.9')
  expect(await walletLogin(h, victimWallet)).toEqual({ status: 200, organizationId: victim })
}, 120_000)

it("copies in the attacker's own sub-organization (50, then 1,000 users holding the victim's public key) do not either, nor cost the sign-in more reads", async () => {
  for (const count of [50, 1_000]) {
    const h = await createHarness()
    const victimWallet = testKey('SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191')
    await copiesInOneSubOrganization(h, victimWallet, count)
    // A key only copies hold.
    const stranger = testKey('SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191')
    await copiesInOneSubOrganization(h, stranger, count)
    h.clock.advance(60_000)
    const victim = await signUp(h, [victimWallet], '198.51.100.9')
    // The victim's first sign-in, and a sign-in naming the parent that no account routes.
    const counted = countRowsRead()
    expect(await walletLogin(h, victimWallet), `${count} copies`).toEqual({
      status: 200,
      organizationId: victim,
    })
    expect((await walletLogin(h, stranger)).status, `${count} copies`).toBe(401)
    const rows = await counted.rows()
    console.log({ count, rows })
    expect(rows, `${count} copies`).toBeLessThan(600)
    vi.restoreAllMocks()
  }
}, 120_000)

it('once the victim signed in, copies made after its account do not hide it either', async () => {
  const h = await createHarness()
  const victimWallet = testKey('SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191')
  const victim = await signUp(h, [victimWallet], '198.51.100.9')
  expect(await walletLogin(h, victimWallet)).toEqual({ status: 200, organizationId: victim })
  // Newer than the (now proven) account: read before it, were the holders read newest first.
  h.clock.advance(60_000)
  await copiesInOneSubOrganization(h, victimWallet, 1_000)
  h.clock.advance(60_000)
  expect(await walletLogin(h, victimWallet)).toEqual({ status: 200, organizationId: victim })
}, 120_000)
