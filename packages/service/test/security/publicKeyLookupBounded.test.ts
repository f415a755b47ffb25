// The auth proxy's anonymous account lookup by public key (`POST /v1/account`, filterType
// PUBLIC_KEY, what the kit's wallet sign-in asks first) reads a bounded number of rows however
// many copies of the key anyone registered. It read every API key row holding the key, and for
// each one someone other than the operator registered asked whether its account is one only that
// key gets into by reading every user of the account: an end user filling their own
// sub-organization with users holding one key (create_users, 100 a call, 10,000 an organization)
// made one anonymous lookup read holders x users rows (2,000 holders: 4,004,003 rows, 24.8 s;
// 10,000: 10^8). The lookup still finds the account a wallet sign-up made past them.
import { afterEach, expect, it, vi } from 'vitest'
import { createHarness, type Harness, type TestKey, testKey } from '../../src/testing/harness.ts'
import { countRowsRead } from './rowsRead.ts'
import { keyCopies, proxyPost } from './walletKeyCopies.ts'

afterEach(() => {
  vi.restoreAllMocks()
})

async function lookUp(h: Harness, key: TestKey) {
  const reply = await proxyPost(
    h,
    'account',
    { filterType: 'PUBLIC_KEY', filterValue: key.publicKey },
    '198.51.100.20',
  )
  const body = reply.body as { organizationId?: string }
  expect(reply.status, JSON.stringify(body)).toBe(200)
  return body
}

/** `holders` users of one attacker's sub-organization, each holding `key`. */
const copies = (h: Harness, key: TestKey, holders: number) => keyCopies(h, key, holders, (i) => `k${i}`)

async function rowsReadByLookup(holders: number): Promise<number> {
  const h = await createHarness()
  const key = testKey('SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191')
  await copies(h, key, holders)
  const counted = countRowsRead()
  await lookUp(h, key)
  return counted.rows()
}

it('one anonymous PUBLIC_KEY lookup reads a bounded number of rows, not holders x users nor one per holder', async () => {
  // Before: 10,207 rows for 100 holders, 1,442,407 for 1,200 (as this counts them).
  for (const holders of [100, 1_200]) {
    const rows = await rowsReadByLookup(holders)
    console.log({ holders, rows })
    expect(rows, `${holders} holders`).toBeLessThan(1_000)
  }
}, 300_000)

it("finds the account a wallet sign-up made, past an attacker's 400 copies of its key made before", async () => {
  const h = await createHarness()
  const wallet = testKey('SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191')
  await copies(h, wallet, 400)
  h.clock.advance(60_000)
  const reply = await proxyPost(
    h,
    'signup',
    { userName: 'wallet user', apiKeys: [wallet.apiKey('wallet')] },
    '198.51.100.9',
  )
  const { organizationId } = reply.body as { organizationId: string }
  expect(reply.status).toBe(200)
  expect((await lookUp(h, wallet)).organizationId).toBe(organizationId)
}, 300_000)
