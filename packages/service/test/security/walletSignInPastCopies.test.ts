// A wallet sign-in names the parent organization (the client does not know its sub-organization
// yet), and the service finds the account among the key's holders under that parent. It read the
// first 50 holders of the key across every organization, in creation order, and only then kept
// those under the parent: registrations of a victim's public wallet key (it is no secret) made
// before the victim's own account filled the window, and the victim's wallet sign-in was refused
// for good. The holders are now read through the index of registered keys, proven apart from
// unproven, newest unproven first: copies made before an account, however many, neither hide it
// nor cost the sign-in more reads.
import { decodeJwtClaims, type SessionClaims } from '@latchkey/protocol'
import { afterEach, expect, it, vi } from 'vitest'
import { createHarness, type Harness, resultOf, type TestKey, testKey } from '../../src/testing/harness.ts'
import { countRowsRead } from './rowsRead.ts'
import { keyCopies, proxyPost } from './walletKeyCopies.ts'

afterEach(() => {
  vi.restoreAllMocks()
})

async function signUp(h: Harness, keys: TestKey[], address: string): Promise<string> {
  const reply = await proxyPost(
    h,
    'signup',
    { userName: 'wallet user', apiKeys: keys.map((k) => k.apiKey(`wallet-auth:${k.publicKey}`)) },
    address,
  )
  const body = reply.body as { organizationId: string }
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
const copiesInOneSubOrganization = (h: Harness, key: TestKey, count: number) =>
  keyCopies(h, key, count, (i) => `wallet ${i}`)

/**
 * The attacker: `count` anonymous sign-ups, each with the victim's (public) key beside a key of
 * their own; then the victim signs up at the app with its wallet (to sign in as the kit does).
 */
async function victimAfterSignUps(count: number) {
  const h = await createHarness()
  const victimWallet = testKey('SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191')
  for (let i = 0; i < count; i++) {
    h.clock.advance(60_000)
    await signUp(h, [victimWallet, testKey()], `203.0.${i}.7`)
  }
  h.clock.advance(60_000)
  const victim = await signUp(h, [victimWallet], '198.51.100.9')
  return { h, victimWallet, victim }
}

it('control: with 49 earlier registrations the victim signs in', async () => {
  const { h, victimWallet, victim } = await victimAfterSignUps(49)
  expect(await walletLogin(h, victimWallet)).toEqual({ status: 200, organizationId: victim })
}, 120_000)

it("50 anonymous sign-ups registering a victim's public wallet key before its own do not lock the victim out of wallet sign-in", async () => {
  const { h, victimWallet, victim } = await victimAfterSignUps(50)
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
