// Spending limits (issue 37) raced across two service instances on one PostgreSQL database: 50
// concurrent signatures of one unit under a 10-unit limit, split over both instances, sign exactly
// 10; the stored window total is exactly what was signed. The same with ERC-20 transfers, SPL
// token transfers, and sponsored eth_send_transaction batches mixed with sign_transaction (anvil
// serves the sends). Limited signatures of many organizations at once neither fail nor rerun each
// other; a limit changed while its account spends is in force for exactly the spends ordered
// after it; a replay under a limit answers the first activity and counts once. The caps of 100
// limits and 100 session profiles an organization, and a profile's unique name, hold when the
// creates race over both instances.
import { type Address, createNoopSigner, generateKeyPairSigner } from '@solana/kit'
import {
  findAssociatedTokenPda,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token'
import type { Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../scripts/postgres.mjs'
import type { CreateServiceOptions } from '../../src/assembly/createService.ts'
import { entriesOf, logOf } from '../../src/limits/spendLog.ts'
import { sponsorAddress } from '../../src/sending/sponsors.ts'
import {
  ETHEREUM_ACCOUNT,
  type Harness,
  type Json,
  limitedSubOrganization,
  resultOf,
  SOLANA_ACCOUNT,
  type TestKey,
} from '../../src/testing/harness.ts'
import { unsignedTransfer } from '../../src/testing/unsignedTransfer.ts'
import {
  type Chain,
  erc20Call,
  startChain,
  TOKEN,
  waitForReplacements,
  waitForSend,
} from '../sending/sendSupport.ts'
import { solanaTransaction } from '../support/solanaTransaction.ts'
import { deploymentOn, twoInstances as twoOnPostgres } from '../support/twoInstances.ts'

const CAIP2 = 'eip155:31337'
const SOLANA_CAIP2 = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp'
const USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v' as Address
const DEAD = '0x000000000000000000000000000000000000dead'

let chain: Chain
let cluster: PostgresCluster

beforeAll(async () => {
  ;[chain, cluster] = await Promise.all([startChain(), startPostgres()])
}, 600_000)

afterAll(async () => {
  await chain?.node.close()
  await cluster?.dispose()
}, 60_000)

/** Two instances on the chain's node; the sends are broadcast by no worker here: what is decided is what these tests check. */
const twoInstances = (database: string, options: Partial<CreateServiceOptions> = {}) =>
  twoOnPostgres(cluster, database, { rpc: { [CAIP2]: chain.url }, sending: { worker: false }, ...options })

/**
 * An unsigned EIP-1559 transaction on eip155:31337 with nonce `nonce` (distinct bodies: no
 * replays), paying no fee: a native limit counts its value alone.
 */
const unsigned = (to: string, value: bigint, nonce: number, data?: Hex) =>
  unsignedTransfer({ to, value, nonce, chainId: 31337, gas: 100_000n, data, maxFeePerGas: 0n })

/** A wallet account (Ethereum unless `account` says) on A and a 10-unit daily limit of `asset` on it. */
async function limited(a: Harness, asset: Json, amount = '10', account: Json = ETHEREUM_ACCOUNT) {
  const { addresses } = resultOf(
    'create_wallet',
    await a.submit('create_wallet', { walletName: 'limited', accounts: [account] }),
  )
  const from = addresses[0] as string
  a.clock.advance(1)
  const { spendingLimitId } = resultOf(
    'latchkey_create_spending_limit',
    await a.submit('latchkey_create_spending_limit', {
      spendingLimitName: 'agent daily',
      scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: from },
      window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
      asset,
      amount,
    }),
  )
  return { from, spendingLimitId: spendingLimitId as string }
}

/** The window total as stored (the usage row's spends), and the one the query answers on B. */
async function totals(
  a: Harness,
  b: Harness,
  spendingLimitId: string,
  /** A sub-organization's limit: its id and root key (default: the dev organization's). */
  org?: { organizationId: string; as: TestKey },
) {
  const log = logOf(await a.service.store.get('spendingLimitUsage', spendingLimitId))
  const stored = entriesOf(log).reduce((sum, entry) => sum + BigInt(entry.amount), 0n)
  // The log's running total is its entries' sum.
  expect(BigInt(log.total)).toBe(stored)
  const listed = (
    await (org
      ? b.query('latchkey_list_spending_limits', { organizationId: org.organizationId }, { as: org.as })
      : b.query('latchkey_list_spending_limits'))
  ).body.spendingLimits.find((limit: Json) => limit.spendingLimitId === spendingLimitId)
  return { stored, used: listed.used, remaining: listed.remaining }
}

function expectExactly(replies: { status: number; body: Json }[], signed: number) {
  expect(replies.filter((reply) => reply.status >= 500).map((reply) => reply.body)).toEqual([])
  expect(replies.filter((reply) => reply.status === 200)).toHaveLength(signed)
  const refused = replies.filter((reply) => reply.status !== 200)
  expect(refused).toHaveLength(replies.length - signed)
  for (const reply of refused)
    expect([reply.status, reply.body.details.errorCode]).toEqual([429, 'SPENDING_LIMIT_EXCEEDED'])
}

/**
 * 50 signatures at once, each spending one unit of `asset` (the `i`th from `from` made by
 * `unsigned`), split over two instances under a 10-unit limit: exactly 10 signed, the stored and
 * listed totals 10.
 */
async function raceOfFifty(
  database: string,
  race: {
    asset: Json
    account?: Json
    type: 'TRANSACTION_TYPE_ETHEREUM' | 'TRANSACTION_TYPE_SOLANA'
    unsigned: (from: string, i: number) => Promise<string>
  },
) {
  const [a, b] = (await twoInstances(database)) as [Harness, Harness]
  const { from, spendingLimitId } = await limited(a, race.asset, '10', race.account)
  const replies = await Promise.all(
    Array.from({ length: 50 }, async (_, i) =>
      [a, b][i % 2]!.submit('sign_transaction', {
        signWith: from,
        type: race.type,
        unsignedTransaction: await race.unsigned(from, i),
      }),
    ),
  )
  expectExactly(replies, 10)
  expect(await totals(a, b, spendingLimitId)).toEqual({
    stored: 10n,
    used: '10',
    remaining: '0',
  })
  for (const h of [a, b]) await h.service.close()
}

describe('spending limits across two instances on PostgreSQL', { timeout: 120_000 }, () => {
  it('50 concurrent 1-wei signatures under a 10-wei limit, split over both: exactly 10 signed, total 10', async () => {
    const [a, b] = (await twoInstances('native_race')) as [Harness, Harness]
    const { from, spendingLimitId } = await limited(a, { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: CAIP2 })
    const started = Date.now()
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        [a, b][i % 2]!.submit('sign_transaction', {
          signWith: from,
          type: 'TRANSACTION_TYPE_ETHEREUM',
          unsignedTransaction: unsigned(DEAD, 1n, i),
        }),
      ),
    )
    const ms = Date.now() - started
    expectExactly(replies, 10)
    // Both instances signed some: the race was between them, not inside one.
    const signedBy = [0, 1].map(
      (k) => replies.filter((reply, i) => i % 2 === k && reply.status === 200).length,
    )
    expect(signedBy[0]! + signedBy[1]!).toBe(10)
    expect(await totals(a, b, spendingLimitId)).toEqual({
      stored: 10n,
      used: '10',
      remaining: '0',
    })
    const refusal = replies.find((reply) => reply.status !== 200)!.body.details
    expect(refusal).toMatchObject({ spendingLimitId, used: '10', remaining: '0', requested: '1' })
    console.log(
      `50 signatures under a limit over two instances: ${ms} ms, signed by A/B ${signedBy.join('/')}`,
    )
    for (const h of [a, b]) await h.service.close()
  })

  it('the same race with ERC-20 transfer calldata under a 10-token limit', async () => {
    await raceOfFifty('erc20_race', {
      asset: { type: 'SPENDING_LIMIT_ASSET_ERC20', caip2: CAIP2, contract: TOKEN },
      type: 'TRANSACTION_TYPE_ETHEREUM',
      unsigned: async (_, i) => unsigned(TOKEN, 0n, i, erc20Call('transfer', DEAD, 1n).data as Hex),
    })
  })

  it('the same race with SPL TransferChecked instructions under a 10-unit limit on the mint', async () => {
    await raceOfFifty('spl_race', {
      asset: { type: 'SPENDING_LIMIT_ASSET_SPL', caip2: SOLANA_CAIP2, mint: USDC_MINT },
      account: SOLANA_ACCOUNT,
      type: 'TRANSACTION_TYPE_SOLANA',
      // A destination each: no two bodies alike.
      unsigned: async (from) => {
        const owner = from as Address
        const [source] = await findAssociatedTokenPda({
          owner,
          mint: USDC_MINT,
          tokenProgram: TOKEN_PROGRAM_ADDRESS,
        })
        const { address: destination } = await generateKeyPairSigner()
        const transfer = getTransferCheckedInstruction({
          source,
          mint: USDC_MINT,
          destination,
          authority: createNoopSigner(owner),
          amount: 1n,
          decimals: 6,
        })
        return solanaTransaction(owner, [transfer])
      },
    })
  })

  it('sponsored batches of two 1-wei calls mixed with 2-wei signatures under a 10-wei limit: exactly 5 pass', async () => {
    const [a, b] = (await twoInstances('batch_race', {
      sponsorship: { delegates: { [CAIP2]: chain.delegate } },
    })) as [Harness, Harness]
    await chain.fund(sponsorAddress(a.service.runtime)!, 10n ** 19n)
    const { from, spendingLimitId } = await limited(a, { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: CAIP2 })
    await chain.fund(from, 10n ** 18n)
    for (const h of [a, b]) h.clock.set(Date.now())
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) => {
        const h = [a, b][i % 2]!
        return i % 4 < 2
          ? h.submit('eth_send_transaction', {
              from,
              caip2: CAIP2,
              sponsor: true,
              // Distinct bodies: identical ones would be one activity, replayed.
              calls: [
                { to: DEAD, value: '1' },
                { to: `0x${'de'.repeat(18)}${i.toString(16).padStart(4, '0')}`, value: '1' },
              ],
            })
          : h.submit('sign_transaction', {
              signWith: from,
              type: 'TRANSACTION_TYPE_ETHEREUM',
              unsignedTransaction: unsigned(DEAD, 2n, i),
            })
      }),
    )
    expectExactly(replies, 5)
    expect(await totals(a, b, spendingLimitId)).toMatchObject({ stored: 10n, used: '10', remaining: '0' })
    // Every accepted send's reservation names its send, so a failure before broadcast can give it back.
    const sends = await a.service.store.all('sendTransactions')
    const entries = entriesOf(logOf(await a.service.store.get('spendingLimitUsage', spendingLimitId)))
    for (const send of sends) expect(entries.filter((entry) => entry.ref === send.id)).toHaveLength(1)
    for (const h of [a, b]) await h.service.close()
  })

  it('a send the node refuses before any broadcast ends FAILED and gives its reservation back; one broadcast keeps it, its fee as paid once mined', async () => {
    // A and B broadcast nothing: the reservation is looked at before any node call can give it
    // back. C, started after, is the deployment's send worker.
    const deployment = deploymentOn(cluster, 'refund', {
      rpc: { [CAIP2]: chain.url },
      sending: { worker: false },
    })
    const [a, b] = [await deployment.open(), await deployment.open()]
    // What an unsponsored send reserves besides its value: its gas limit times the highest fee
    // the service would ever sign for it, 2 gwei raised 25% by each of up to 3 replacements.
    const fees = { gasLimit: '21000', maxFeePerGas: '2000000000' }
    const fee = 21_000n * 3_906_250_000n
    const { from, spendingLimitId } = await limited(
      a,
      { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: CAIP2 },
      String(10n + fee),
    )
    const reserved = { stored: 10n + fee, used: String(10n + fee), remaining: '0' }
    await chain.fund(from, 10n ** 18n)
    // The account's nonce is 5 on the node: a send signed with nonce 0 is refused (nonce too low).
    await chain.rpc('anvil_setNonce', [from, '0x5'])
    const send = async (h: Harness, parameters: Json) => {
      h.clock.set(Date.now())
      return resultOf(
        'eth_send_transaction',
        await h.submit('eth_send_transaction', { from, caip2: CAIP2, ...parameters }),
      ).sendTransactionStatusId as string
    }
    const refused = await send(a, { nonce: '0', calls: [{ to: DEAD, value: '10' }], ...fees })
    expect(await totals(a, b, spendingLimitId)).toMatchObject(reserved)
    // Two send workers, both following the sends: a release or a settlement is made once.
    const [c, d] = [
      await deployment.open({ sending: { pollIntervalMs: 20 } }),
      await deployment.open({ sending: { pollIntervalMs: 20 } }),
    ]
    expect((await waitForSend(a, refused, { timeoutMs: 20_000 })).txStatus).toBe('FAILED')
    expect(await totals(a, b, spendingLimitId)).toMatchObject({
      stored: 0n,
      used: '0',
      remaining: String(10n + fee),
    })
    // Broadcast and included: it keeps counting, its fee as paid (the receipt's), not as reserved.
    const included = await send(b, { calls: [{ to: DEAD, value: '10' }], ...fees })
    expect((await waitForSend(a, included, { timeoutMs: 20_000 })).txStatus).toBe('INCLUDED')
    const { receipt } = (await a.service.store.get('sendTransactions', included))!
    const paid = 10n + BigInt(receipt!.gasUsed) * BigInt(receipt!.effectiveGasPrice)
    expect(paid).toBeLessThan(reserved.stored)
    expect(await totals(a, b, spendingLimitId)).toMatchObject({ stored: paid, used: String(paid) })
    for (const h of [a, b, c, d]) await h.service.close()
  })

  it('an unsponsored send stuck until its third replacement never signs a fee past what its limit reserved; once mined, the limit keeps what it paid', async () => {
    const deployment = deploymentOn(cluster, 'replaced', {
      rpc: { [CAIP2]: chain.url },
      sending: { pollIntervalMs: 20, replaceAfterMs: 100 },
    })
    const a = await deployment.open()
    // 21,000 gas at 2 gwei, and the 3 replacements at +25% each: 3.90625 gwei at most.
    const fee = 21_000n * 3_906_250_000n
    const { from, spendingLimitId } = await limited(
      a,
      { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: CAIP2 },
      String(10n + fee),
    )
    await chain.fund(from, 10n ** 18n)
    const balance = async () => BigInt((await chain.rpc('eth_getBalance', [from, 'latest'])) as string)
    const before = await balance()
    let id: string
    await chain.rpc('evm_setAutomine', [false])
    try {
      a.clock.set(Date.now())
      id = resultOf(
        'eth_send_transaction',
        await a.submit('eth_send_transaction', {
          from,
          caip2: CAIP2,
          calls: [{ to: DEAD, value: '10' }],
          gasLimit: '21000',
          maxFeePerGas: '2000000000',
        }),
      ).sendTransactionStatusId as string
      expect(await totals(a, a, spendingLimitId)).toMatchObject({ stored: 10n + fee, remaining: '0' })
      const row = await waitForReplacements(a, id, 3)
      expect(row.replacements).toBe(3)
      // Each version raised the one before: the last one signed costs at most exactly what was reserved.
      expect(BigInt(row.fees!.gasLimit) * BigInt(row.fees!.maxFeePerGas)).toBe(fee)
      expect(await totals(a, a, spendingLimitId)).toMatchObject({ stored: 10n + fee, remaining: '0' })
    } finally {
      await chain.rpc('evm_setAutomine', [true])
    }
    await chain.rpc('evm_mine', [])
    // Mined: the fee it paid (under its cap) is what the limit keeps, exactly what the account lost.
    expect((await waitForSend(a, id, { timeoutMs: 20_000 })).txStatus).toBe('INCLUDED')
    const { receipt } = (await a.service.store.get('sendTransactions', id))!
    const paid = 10n + BigInt(receipt!.gasUsed) * BigInt(receipt!.effectiveGasPrice)
    expect(paid).toBeLessThan(10n + fee)
    expect(before - (await balance())).toBe(paid)
    expect(await totals(a, a, spendingLimitId)).toMatchObject({
      stored: paid,
      remaining: String(10n + fee - paid),
    })
    await a.service.close()
  })

  it('150 signatures at once under one roomy limit, over both instances: every one signed, none out of reruns', async () => {
    // Every spend rewrites the limit's one usage row: each process runs them one at a time
    // (`serializes`), so only the two instances race and no request runs out of reruns (before,
    // about one in sixteen answered 503 STORAGE_UNAVAILABLE at this concurrency).
    const [a, b] = (await twoInstances('hot_limit')) as [Harness, Harness]
    const { from, spendingLimitId } = await limited(
      a,
      { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: CAIP2 },
      '1000',
    )
    const replies = await Promise.all(
      Array.from({ length: 150 }, (_, i) =>
        [a, b][i % 2]!.submit('sign_transaction', {
          signWith: from,
          type: 'TRANSACTION_TYPE_ETHEREUM',
          unsignedTransaction: unsigned(DEAD, 1n, i),
        }),
      ),
    )
    expect(replies.filter((reply) => reply.status !== 200).map((reply) => reply.body)).toEqual([])
    expect(await totals(a, b, spendingLimitId)).toMatchObject({ stored: 150n, used: '150' })
    for (const h of [a, b]) await h.service.close()
  })

  it('limits that share nothing do not conflict: 16 accounts, each under its own limit, sign at once over both', async () => {
    // Each limit's own usage row: no spend waits for, or reruns because of, another limit's. (Before
    // the usage table kept room on its pages, 16 × 15 such signatures once ran out of reruns: 503.)
    const [a, b] = (await twoInstances('independent')) as [Harness, Harness]
    const accounts = []
    for (let i = 0; i < 16; i++)
      accounts.push(await limited(a, { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: CAIP2 }, '1000'))
    const replies = (
      await Promise.all(
        accounts.map(async ({ from }, w) => {
          const mine = []
          for (let k = 0; k < 5; k++)
            mine.push(
              await [a, b][(w + k) % 2]!.submit('sign_transaction', {
                signWith: from,
                type: 'TRANSACTION_TYPE_ETHEREUM',
                unsignedTransaction: unsigned(DEAD, 3n, k),
              }),
            )
          return mine
        }),
      )
    ).flat()
    expect(replies.filter((reply) => reply.status !== 200).map((reply) => reply.body)).toEqual([])
    for (const { spendingLimitId } of accounts) expect((await totals(a, b, spendingLimitId)).stored).toBe(15n)
    for (const h of [a, b]) await h.service.close()
  })
})

/** A sub-organization with one Ethereum account, under a `amount`-wei daily limit its root sets. */
const limitedOrganization = (a: Harness, amount: string) =>
  limitedSubOrganization(a, { amount, caip2: CAIP2 })

/**
 * The organization's activities in the order their transactions held its spend lock: every writer
 * of its limit state writes only while holding it and commits before giving it back, so the
 * transaction ids PostgreSQL assigned them (at their first write, under the lock) follow that order.
 * The signatures a process queued meanwhile commit as one group, one transaction (one id): its
 * rows say nothing of their order inside it, so its signatures come first, then its refusals. With
 * 1-wei spends under one limit in force for the whole group (a limit's change is a transaction of
 * its own), the group was legal only if its signatures fit and it was full when it refused.
 */
function inLockOrder(cluster: PostgresCluster, database: string, organizationId: string) {
  return cluster
    .psql(
      `select xmin::text || ' ' || data from activities where "organizationId" = '${organizationId}' order by xmin::text::bigint`,
      database,
    )
    .split('\n')
    .map((line) => ({
      transaction: BigInt(line.slice(0, line.indexOf(' '))),
      row: JSON.parse(line.slice(line.indexOf(' ') + 1)),
    }))
    .sort(
      (x, y) =>
        Number(x.transaction > y.transaction) - Number(x.transaction < y.transaction) ||
        Number(y.row.status === 'ACTIVITY_STATUS_COMPLETED') -
          Number(x.row.status === 'ACTIVITY_STATUS_COMPLETED'),
    )
    .map((entry) => entry.row)
}

/**
 * Replays the organization's history in lock order against the limit in force at each point: every
 * signature that passed fit under it, every refusal was over it, and the stored total is the sum.
 */
async function expectLinearizable(
  a: Harness,
  database: string,
  org: { organizationId: string; spendingLimitId: string },
  initialCap: bigint,
) {
  let cap = initialCap
  let used = 0n
  const seen = { signed: 0, refused: 0, updates: 0 }
  for (const row of inLockOrder(cluster, database, org.organizationId)) {
    if (row.path === 'latchkey_update_spending_limit') {
      expect(row.status).toBe('ACTIVITY_STATUS_COMPLETED')
      cap = BigInt(row.intent.amount)
      seen.updates++
    } else if (row.path === 'sign_transaction') {
      if (row.status === 'ACTIVITY_STATUS_COMPLETED') {
        used += 1n
        expect(used, 'a signature past the limit in force when it committed').toBeLessThanOrEqual(cap)
        seen.signed++
      } else {
        expect(row.failure.details.errorCode).toBe('SPENDING_LIMIT_EXCEEDED')
        expect(used + 1n, 'a refusal under the limit in force').toBeGreaterThan(cap)
        seen.refused++
      }
    }
  }
  const log = logOf(await a.service.store.get('spendingLimitUsage', org.spendingLimitId))
  expect(entriesOf(log).reduce((sum, entry) => sum + BigInt(entry.amount), 0n)).toBe(used)
  expect(BigInt(log.total)).toBe(used)
  return seen
}

describe("limit state ordered by the organization's spend lock, over two instances", {
  timeout: 120_000,
}, () => {
  it('many organizations at once, each under its own limit: no 503, no rerun, every total exact', async () => {
    let conflicts = 0
    const [a, b] = (await twoInstances('many_organizations', {
      events: {
        emit: (name, data) => {
          if (name === 'store.retry' && (data as { reason: string }).reason === 'conflict') conflicts++
        },
      },
    })) as [Harness, Harness]
    const organizations = await Promise.all(
      Array.from({ length: 12 }, (_, n) => limitedOrganization([a, b][n % 2]!, '4')),
    )
    conflicts = 0
    // 12 organizations × 10 one-wei signatures, all at once, each organization's split over both.
    const replies = await Promise.all(
      organizations.flatMap((org, n) =>
        Array.from({ length: 10 }, (_, i) =>
          [a, b][(n + i) % 2]!.submit(
            'sign_transaction',
            {
              signWith: org.from,
              type: 'TRANSACTION_TYPE_ETHEREUM',
              unsignedTransaction: unsigned(DEAD, 1n, i),
            },
            org,
          ),
        ),
      ),
    )
    expectExactly(replies, 12 * 4)
    for (const [n, org] of organizations.entries()) {
      expectExactly(replies.slice(n * 10, n * 10 + 10), 4)
      expect(await totals(a, b, org.spendingLimitId, org)).toMatchObject({ stored: 4n, used: '4' })
    }
    // Limited signatures of different organizations share no row: none failed another's commit.
    expect(conflicts).toBe(0)
    for (const h of [a, b]) await h.service.close()
  })

  it('a limit lowered while its account spends over both instances: no spend past the limit in force when it committed', async () => {
    const [a, b] = (await twoInstances('lowered')) as [Harness, Harness]
    /**
     * 6 of 10 spent, then the limit lowered to 5 while 16 one-wei spends race it over both
     * instances (the lowering sent after the first 4 spends, or before them all): every spend the
     * lowering precedes must be refused, every one before it may pass while under 10.
     */
    const race = async (lowerFirst: boolean) => {
      const org = await limitedOrganization(a, '10')
      const spend = (h: Harness, i: number) =>
        h.submit(
          'sign_transaction',
          {
            signWith: org.from,
            type: 'TRANSACTION_TYPE_ETHEREUM',
            unsignedTransaction: unsigned(DEAD, 1n, i),
          },
          org,
        )
      for (let i = 0; i < 6; i++) expect((await spend(a, 1000 + i)).status).toBe(200)
      const lower = () =>
        b.submit('latchkey_update_spending_limit', { spendingLimitId: org.spendingLimitId, amount: '5' }, org)
      const lowered = lowerFirst ? lower() : undefined
      const spends = Array.from({ length: 4 }, (_, i) => spend([a, b][i % 2]!, i))
      const later = lowered ?? lower()
      spends.push(...Array.from({ length: 12 }, (_, i) => spend([a, b][i % 2]!, 100 + i)))
      const replies = await Promise.all(spends)
      expect((await later).status).toBe(200)
      expect(replies.filter((reply) => reply.status >= 500).map((reply) => reply.body)).toEqual([])
      const seen = await expectLinearizable(a, 'lowered', org, 10n)
      expect(seen).toMatchObject({ updates: 1, signed: 6 + replies.filter((r) => r.status === 200).length })
    }
    // The lowering among the spends, then before them, each twice.
    for (const lowerFirst of [false, false, true, true]) await race(lowerFirst)
    for (const h of [a, b]) await h.service.close()
  })

  it('a replayed signed request under a limit answers the first activity on both instances and counts once', async () => {
    const [a, b] = (await twoInstances('limited_replay')) as [Harness, Harness]
    const org = await limitedOrganization(a, '10')
    const body = {
      signWith: org.from,
      type: 'TRANSACTION_TYPE_ETHEREUM',
      unsignedTransaction: unsigned(DEAD, 3n, 0),
    }
    const timestampMs = String(a.clock.now())
    const send = (h: Harness) => h.submit('sign_transaction', body, { ...org, timestampMs })
    // The same bytes four times at once over both instances, then once more afterwards.
    const replies = [...(await Promise.all([send(a), send(b), send(a), send(b)])), await send(b)]
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200, 200, 200])
    const ids = new Set(replies.map((reply) => reply.body.activity.id))
    expect(ids.size).toBe(1)
    expect(await totals(a, b, org.spendingLimitId, org)).toMatchObject({ stored: 3n, used: '3' })
    // One entry, without a reference: a signature is never given back.
    expect(entriesOf(logOf(await a.service.store.get('spendingLimitUsage', org.spendingLimitId)))).toEqual([
      { at: expect.any(Number), amount: '3' },
    ])
    for (const h of [a, b]) await h.service.close()
  })
})

describe('at most 100 limits and 100 session profiles an organization, raced over two instances', {
  timeout: 120_000,
}, () => {
  /** `submit` 12 times at once over both instances: `make(i)` the path and parameters of each. */
  const race = (a: Harness, b: Harness, make: (i: number) => [Parameters<Harness['submit']>[0], Json]) =>
    Promise.all(Array.from({ length: 12 }, (_, i) => [a, b][i % 2]!.submit(...make(i))))

  it('95 limits, then 12 creates at once: exactly 5 are made, the rest refused naming the cap', async () => {
    const [a, b] = (await twoInstances('limits_cap')) as [Harness, Harness]
    const { addresses } = resultOf(
      'create_wallet',
      await a.submit('create_wallet', { walletName: 'capped', accounts: [ETHEREUM_ACCOUNT] }),
    )
    const limit = (n: number): Json => ({
      spendingLimitName: `limit ${n}`,
      scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: addresses[0] },
      window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
      asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: CAIP2 },
      amount: '10',
    })
    for (let n = 0; n < 95; n++)
      expect((await a.submit('latchkey_create_spending_limit', limit(n))).status).toBe(200)
    const replies = await race(a, b, (i) => ['latchkey_create_spending_limit', limit(100 + i)])
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(5)
    for (const reply of replies.filter((reply) => reply.status !== 200)) {
      expect(reply.status).toBe(429)
      expect(reply.body.message).toMatch(/has 100 spending limits, the most it may have/)
    }
    const listed = (await b.query('latchkey_list_spending_limits')).body.spendingLimits as Json[]
    expect(listed).toHaveLength(100)
    for (const h of [a, b]) await h.service.close()
  })

  it('95 session profiles, then 12 creates at once: exactly 5; 12 of one name at once: exactly 1', async () => {
    const [a, b] = (await twoInstances('profiles_cap')) as [Harness, Harness]
    // Notes told apart, so no two requests are one replayed.
    const profile = (name: string, notes = ''): Json => ({
      sessionProfileName: name,
      scope: "activity.action == 'SIGN'",
      notes,
    })
    for (let n = 0; n < 94; n++)
      expect((await a.submit('create_session_profile', profile(`profile ${n}`))).status).toBe(200)
    // One name, twelve times at once: one profile of it.
    const same = await race(a, b, (i) => ['create_session_profile', profile('signer', `try ${i}`)])
    expect(same.filter((reply) => reply.status === 200)).toHaveLength(1)
    for (const reply of same.filter((reply) => reply.status !== 200))
      expect([reply.status, reply.body.details?.field ?? reply.body.details?.fieldViolations]).toEqual([
        409,
        'parameters.sessionProfileName',
      ])
    // 95 now; twelve distinct names at once: five fit.
    const replies = await race(a, b, (i) => ['create_session_profile', profile(`more ${i}`)])
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(5)
    for (const reply of replies.filter((reply) => reply.status !== 200)) {
      expect(reply.status).toBe(429)
      expect(reply.body.message).toMatch(/has 100 session profiles, the most it may have/)
    }
    expect(await a.service.store.count('sessionProfiles', 'organizationId', a.organizationId)).toBe(100)
    for (const h of [a, b]) await h.service.close()
  })
})
