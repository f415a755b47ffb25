// The root-set and quorum cases of rootSetAndWalletChangedWhileSigning.test.ts, rerun as sends
// (found by an audit of that fix): a root user taken out of the root set (or the quorum raised),
// then its now-pointless limit deleted, while that user's 100 ETH `eth_send_transaction` is in
// flight. Every committed state refuses the send (before: over the limit; after: not root, or
// waiting for the quorum); the mix of the two sent it, uncounted. A send is no snapshot activity:
// its decision read the root users and quorum from the organization row admission read, while the
// spend guard read the limits in its transaction, after the lock. Now every transaction that is
// not a snapshot run of the request's reads decides on the organization as it reads it
// (`organizationNow`, pipeline/submitActivity.ts), on PostgreSQL with two instances and on SQLite.
import { afterAll, beforeAll, describe } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../scripts/postgres.mjs'
import { createHarness, fakeClock, type Harness } from '../../src/testing/harness.ts'
import { type Chain, startChain } from '../sending/sendSupport.ts'
import { twoInstances } from '../support/twoInstances.ts'
import { rootSetCases, type TwoRoots, twoRoots } from './rootSetChanges.ts'

const CAIP2 = 'eip155:31337'
const DEAD = '0x000000000000000000000000000000000000dEaD'
const ETH = 10n ** 18n
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

/** Two root users (quorum 1), each under an allowance on the chain, their account funded. */
async function fundedRoots(a: Harness) {
  const t = await twoRoots(a, CAIP2)
  await chain.fund(t.address, 200n * ETH)
  return t
}

/** R1's eth_send_transaction of `value` wei (`rootSetCases`), its clock moved on 1 ms. */
const send = (t: TwoRoots, on: Harness, value: bigint): Parameters<Harness['submit']> => {
  on.clock.advance(1)
  return [
    'eth_send_transaction',
    { from: t.address, caip2: CAIP2, calls: [{ to: DEAD, value: String(value) }], ...PRICE } as never,
    { as: t.r1, organizationId: t.organizationId },
  ]
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
  rootSetCases('send', instances, fundedRoots, send)
}
