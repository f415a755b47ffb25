/**
 * What policies cost per activity: decoding the transaction into `eth.tx`, building the
 * condition and consensus keywords, and evaluating 0, 10 or 100 policies (each parsed once and
 * cached, as the service does). Target: 100 policies add < 2 ms. Prints figures; not a test.
 * Run: npm run bench:policies
 */
import { serializeTransaction } from 'viem'
import { decodeTransactionForPolicy } from '../packages/service/src/kernel/crypto/signTransaction.ts'
import { evaluatePolicies, type PolicyInput } from '../packages/service/src/policies/evaluatePolicies.ts'
import { consensusContextOf, policyContextOf } from '../packages/service/src/policies/policyContextOf.ts'
import { createHarness, ETHEREUM_ACCOUNT, resultOf } from '../packages/service/src/testing/index.ts'
import { median, printTable } from './printTable.ts'

const h = await createHarness()
const { addresses } = resultOf(
  'create_wallet',
  await h.submit('create_wallet', { walletName: 'Bench', accounts: [ETHEREUM_ACCOUNT] }),
)
const from = addresses[0] as string
const whoami = (await h.query('whoami')).body
const to = (i: number) => `0x${i.toString(16).padStart(40, '0')}`

const activity = {
  id: 'bench',
  organizationId: h.organizationId,
  path: 'sign_transaction',
  type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
  intent: {
    signWith: from,
    type: 'TRANSACTION_TYPE_ETHEREUM',
    unsignedTransaction: serializeTransaction({
      type: 'eip1559',
      chainId: 31337,
      nonce: 4,
      maxFeePerGas: 2n * 10n ** 9n,
      maxPriorityFeePerGas: 10n ** 9n,
      gas: 60000n,
      to: to(99) as `0x${string}`,
      value: 10n ** 17n,
      data: '0xa9059cbb0000000000000000000000000000000000000000000000000000000000000001',
    }),
  },
}

/** A realistic mix: transfers to one address under a limit, a few DENY guards, a few with consensus. */
function policies(count: number): PolicyInput[] {
  return Array.from({ length: count }, (_, i): PolicyInput => {
    if (i % 5 === 4)
      return {
        id: `p${i}`,
        effect: 'EFFECT_DENY',
        condition: `activity.resource == 'WALLET' && eth.tx.data[0..10] == '0xdeadbee${i % 10}' && eth.tx.chain_id in [1, 10, 8453]`,
      }
    return {
      id: `p${i}`,
      effect: 'EFFECT_ALLOW',
      condition: `activity.resource == 'WALLET' && activity.action == 'SIGN' && eth.tx.to == '${to(i)}' && eth.tx.value <= 1000000000000000000`,
      ...(i % 7 === 0 ? { consensus: "approvers.filter(u, u.tags.contains('admin')).count() >= 2" } : {}),
    }
  })
}

async function perActivity(list: PolicyInput[]): Promise<number> {
  const context = await policyContextOf(h.service.store, activity, {
    decodeTransaction: decodeTransactionForPolicy,
  })
  const consensus = await consensusContextOf(h.service.store, h.organizationId, [
    { userId: whoami.userId, credentialId: 'bench' },
  ])
  const result = evaluatePolicies({ policies: list, context, consensus, rootQuorumMet: false })
  if (result.evaluations.length !== list.length) throw new Error('not every policy was evaluated')
  return result.evaluations.length
}

function measure(list: PolicyInput[]): number {
  for (let i = 0; i < 200; i++) perActivity(list) // warm up (and fill the parse cache)
  const samples: number[] = []
  for (let round = 0; round < 15; round++) {
    const runs = 200
    const start = performance.now()
    for (let i = 0; i < runs; i++) perActivity(list)
    samples.push((performance.now() - start) / runs)
  }
  return median(samples)
}

const lists = [0, 10, 100].map((count) => policies(count))
for (const list of lists) measure(list) // warm every size before timing any
const times = lists.map(measure)
const base = times[0] ?? 0
printTable(
  ['per sign_transaction activity', 'total', 'added by policies'],
  lists.map((list, i) => [
    `${list.length} policies`,
    `${((times[i] ?? 0) * 1000).toFixed(1)} µs`,
    `${(((times[i] ?? 0) - base) * 1000).toFixed(1)} µs`,
  ]),
)
const added100 = (times[2] ?? 0) - base
console.log(
  `\n100 policies add ${added100.toFixed(3)} ms per activity (target < 2 ms): ${added100 < 2 ? 'met' : 'NOT met'}`,
)

// The worst an organization can do: 1,000 policies each near the per-expression step limit. The
// decision's shared budget cuts them off, so one activity stays bounded.
const hostile: PolicyInput[] = Array.from({ length: 1000 }, (_, i) => ({
  id: `h${i}`,
  effect: 'EFFECT_ALLOW',
  consensus: 'approvers.all(a, approvers.all(b, true))',
}))
const crowd = Array.from({ length: 95 }, (_, i) => ({ id: `u${i}`, tags: [], email: '', alias: '' }))
const hostileContext = await policyContextOf(h.service.store, activity, {
  decodeTransaction: decodeTransactionForPolicy,
})
const hostileRuns: number[] = []
for (let round = 0; round < 5; round++) {
  const start = performance.now()
  evaluatePolicies({
    policies: hostile,
    context: hostileContext,
    consensus: { approvers: crowd, credentials: [] },
    rootQuorumMet: false,
  })
  hostileRuns.push(performance.now() - start)
}
console.log(
  `1,000 hostile policies (cut off by the per-decision budget): ${median(hostileRuns).toFixed(1)} ms per activity`,
)
