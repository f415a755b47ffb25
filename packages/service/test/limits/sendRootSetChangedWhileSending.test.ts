// The root-set and quorum cases of rootSetAndWalletChangedWhileSigning.test.ts, rerun as sends
// (found by an audit of that fix): a root user taken out of the root set (or the quorum raised),
// then its now-pointless limit deleted, while that user's 100 ETH `eth_send_transaction` is in
// flight. Every committed state refuses the send (before: over the limit; after: not root, or
// waiting for the quorum); the mix of the two sent it, uncounted. A send is no snapshot activity:
// its decision read the root users and quorum from the organization row admission read, while the
// spend guard read the limits in its transaction, after the lock. Now every transaction that is
// not a snapshot run of the request's reads decides on the organization as it reads it
// (`organizationNow`, pipeline/submitActivity.ts), on PostgreSQL with two instances and on SQLite.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../scripts/postgres.mjs'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  fakeClock,
  type Harness,
  resultOf,
  testKey,
} from '../../src/testing/harness.ts'
import { refusal, submitRacing } from '../security/inFlight.ts'
import { type Chain, receiptOf, startChain } from '../sending/sendSupport.ts'
import { twoInstances } from '../support/twoInstances.ts'
import { submitOk } from './agentGrant.ts'

const CAIP2 = 'eip155:31337'
const DEAD = '0x000000000000000000000000000000000000dEaD'
const ETH = 10n ** 18n
const ALLOWANCE = 10_000n
const PRICE = {
  gasLimit: '21000',
  maxFeePerGas: String(2n * 10n ** 9n),
  maxPriorityFeePerGas: String(10n ** 9n),
}

let cluster: PostgresCluster
let chain: Chain
beforeAll(async () => {
  ;[chain, cluster] = await Promise.all([startChain(), startPostgres()])
}, 600_000)
afterAll(async () => {
  await chain?.node.close()
  await cluster?.dispose()
}, 60_000)

/** Two root users (quorum 1), each under a user-scoped allowance of 10,000 wei a day on the chain. */
async function twoRoots(a: Harness) {
  const [r1, r2] = [testKey(), testKey()]
  const sub = await a.createSubOrganization({
    keys: [r1, r2],
    wallet: { walletName: 'W', accounts: [ETHEREUM_ACCOUNT] },
  })
  const organizationId = sub.organizationId
  const [u1, u2] = sub.userIds as [string, string]
  const from = sub.addresses![0]!
  await chain.fund(from, 200n * ETH)
  const limitOf: Record<string, string> = {}
  for (const userId of [u1, u2])
    limitOf[userId] = resultOf(
      'latchkey_create_spending_limit',
      await submitOk(
        a,
        'latchkey_create_spending_limit',
        {
          spendingLimitName: `allowance of ${userId}`,
          scope: { type: 'SPENDING_LIMIT_SCOPE_USER', userId },
          window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
          asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: CAIP2 },
          amount: String(ALLOWANCE),
        },
        r2,
        organizationId,
      ),
    ).spendingLimitId as string
  /** R1's eth_send_transaction of `value` wei, its clock moved on 1 ms. */
  const send = (h: Harness, value: bigint): Parameters<Harness['submit']> => {
    h.clock.advance(1)
    return [
      'eth_send_transaction',
      { from, caip2: CAIP2, calls: [{ to: DEAD, value: String(value) }], ...PRICE } as never,
      { as: r1, organizationId },
    ]
  }
  return { r1, r2, u1, u2, organizationId, limitOf, send }
}

const sending = () => ({ rpc: { [CAIP2]: chain.url }, sending: { worker: false, pollIntervalMs: 250 } })

describe('a send under a limit decides on the organization as of its lock (PostgreSQL, two instances)', () => {
  let instances: [Harness, Harness]
  beforeAll(async () => {
    instances = await twoInstances(cluster, 'send_root_set', sending() as never)
  }, 120_000)
  afterAll(async () => {
    for (const h of instances ?? []) await h?.service.close()
  })
  cases(() => instances)
})

describe('a send under a limit decides on the organization as of its transaction (SQLite)', () => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness({ clock: fakeClock(Date.now()), ...sending() } as never)
  })
  afterAll(async () => {
    await h?.service.close()
  })
  cases(() => [h, h])
})

function cases(instances: () => [Harness, Harness]) {
  it('a root user removed from the root set, then its limit deleted, while its 100 ETH send is in flight: not sent', async () => {
    const [a, b] = instances()
    const t = await twoRoots(a)
    // Control: the limit holds the root user.
    expect(refusal(await b.submit(...t.send(b, 100n * ETH)))).toEqual([429, 'SPENDING_LIMIT_EXCEEDED'])
    const sent = await submitRacing(
      b,
      async () => {
        await submitOk(a, 'update_root_quorum', { threshold: 1, userIds: [t.u2] }, t.r2, t.organizationId)
        await submitOk(
          a,
          'latchkey_delete_spending_limit',
          { spendingLimitId: t.limitOf[t.u1] },
          t.r2,
          t.organizationId,
        )
      },
      ...t.send(b, 100n * ETH),
    )
    if (sent.status === 200) {
      // What it cost: the send is recorded, and broadcast by the worker, 100 ETH out of the
      // account, counted under no limit (R1's was deleted; R2's does not cover R1).
      const id = sent.body.activity.result.ethSendTransactionResultV2.sendTransactionStatusId as string
      const before = await chain.balance(DEAD)
      const worker = startSendWorker(b.service.runtime, { loop: false })
      for (
        let i = 0;
        i < 20 && (await b.service.store.get('sendTransactions', id))?.status === 'PENDING';
        i++
      ) {
        b.clock.advance(1000)
        await worker.pass()
      }
      const row = await b.service.store.get('sendTransactions', id)
      if (row && row.status !== 'PENDING' && row.status !== 'FAILED') {
        await receiptOf(chain, row.txHash)
        console.log(
          `${row.status}: sent on chain: ${(await chain.balance(DEAD)) - before} wei to DEAD, tx ${row.txHash}`,
        )
      }
    }
    // Before: 429 over the limit; after: 403 (R1 not root, no policy). Never 200.
    expect(sent.status, JSON.stringify(sent.body?.activity?.result ?? sent.body)).not.toBe(200)
    // A fresh one now is refused by the policies.
    expect((await b.submit(...t.send(b, 100n * ETH))).status).toBe(403)
  })

  it('the root quorum raised to 2-of-2, then the root user’s limit deleted with both roots’ approval, while its 100 ETH send is in flight: not sent alone', async () => {
    const [a, b] = instances()
    const t = await twoRoots(a)
    expect(refusal(await b.submit(...t.send(b, 100n * ETH)))).toEqual([429, 'SPENDING_LIMIT_EXCEEDED'])
    const sent = await submitRacing(
      b,
      async () => {
        await submitOk(
          a,
          'update_root_quorum',
          { threshold: 2, userIds: [t.u1, t.u2] },
          t.r2,
          t.organizationId,
        )
        const proposed = await submitOk(
          a,
          'latchkey_delete_spending_limit',
          { spendingLimitId: t.limitOf[t.u1] },
          t.r2,
          t.organizationId,
          'ACTIVITY_STATUS_CONSENSUS_NEEDED',
        )
        await submitOk(
          a,
          'approve_activity',
          { fingerprint: proposed.body.activity.fingerprint },
          t.r1,
          t.organizationId,
        )
      },
      ...t.send(b, 100n * ETH),
    )
    expect(sent.body?.activity?.status, JSON.stringify(sent.body?.activity?.result ?? sent.body)).not.toBe(
      'ACTIVITY_STATUS_COMPLETED',
    )
    const fresh = await b.submit(...t.send(b, 100n * ETH))
    expect(fresh.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
  })
}
