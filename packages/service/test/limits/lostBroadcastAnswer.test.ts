// A send whose broadcast answer was lost keeps what it reserved under spending limits. The rule
// (docs/spending-limits.md, "Refunds"): a send that ends FAILED before any broadcast was accepted
// gives its reservation back; anything signed that may have reached a node keeps counting. A
// broadcast whose answer was lost (a gateway's 504 after it forwarded the transaction, a timeout)
// counts an attempt and leaves the send PENDING with no broadcast time, though the node may hold
// and gossip it. The worker kept its nonce then, but gave its spend back when the retry was refused
// for any reason but "already known" / "nonce too low" (here geth's "txpool is full"): an agent
// under a 0.05 ETH a day limit got 0.1 ETH out of the account, both transfers mined.
import { Transaction } from 'micro-eth-signer'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { createHarness, ETHEREUM_ACCOUNT, fakeClock, resultOf, testKey } from '../../src/testing/harness.ts'
import { type Chain, startChain } from '../sending/sendSupport.ts'
import { agentUser } from './agentGrant.ts'

const CAIP2 = 'eip155:31337'
const GWEI = 10n ** 9n
const DEAD = '0x000000000000000000000000000000000000dEaD'

let chain: Chain
beforeAll(async () => {
  chain = await startChain()
}, 60_000)
afterAll(async () => {
  await chain?.node.close()
})

/**
 * The operator's RPC endpoint: a gateway in front of the node. The first eth_sendRawTransaction is
 * forwarded to the node (which takes it) but the gateway answers 504; the retry is answered by the
 * node as geth answers under load ("txpool is full"). Everything else reaches the node.
 */
function flakyGateway() {
  const forwarded: string[] = []
  let sendRaws = 0
  const fetchFn: typeof fetch = async (input, init) => {
    const body = JSON.parse(String(init?.body)) as { id: number; method: string; params: string[] }
    if (body.method === 'eth_sendRawTransaction') {
      sendRaws++
      if (sendRaws === 1) {
        forwarded.push(body.params[0]!)
        await fetch(input, init) // the node takes it
        return new Response('<html><body>504 Gateway Time-out</body></html>', { status: 504 })
      }
      if (sendRaws === 2) {
        const error = { code: -32000, message: 'txpool is full' }
        return new Response(JSON.stringify({ jsonrpc: '2.0', id: body.id, error }), {
          headers: { 'content-type': 'application/json' },
        })
      }
    }
    return fetch(input, init)
  }
  return { fetch: fetchFn, forwarded }
}

describe('spend given back after a broadcast that may have reached the node', { timeout: 60_000 }, () => {
  it('a send whose first broadcast answer was lost keeps its reservation when its retry is refused', async () => {
    const gateway = flakyGateway()
    const h = await createHarness({
      clock: fakeClock(Date.now()),
      rpc: { [CAIP2]: chain.url },
      sending: { worker: false, pollIntervalMs: 20 },
      fetch: gateway.fetch,
    })
    try {
      const sub = await h.createSubOrganization({ wallet: { walletName: 'W', accounts: [ETHEREUM_ACCOUNT] } })
      const owner = sub.keys[0]!
      const from = sub.addresses![0]!
      const organizationId = sub.organizationId
      const submit = (path: Parameters<typeof h.submit>[0], parameters: never, as = owner) => {
        h.clock.set(Math.max(h.clock.now() + 1, Date.now()))
        return h.submit(path, parameters, { as, organizationId })
      }
      // The agent: a non-root user with an API key, allowed to sign and send, under a limit.
      const agent = testKey()
      const { userIds } = resultOf('create_users', await submit('create_users', agentUser(agent) as never))
      const keys = await h.query('get_api_keys', { userId: userIds[0] }, { as: owner, organizationId })
      const apiKeyId = keys.body.apiKeys[0].apiKeyId as string
      // One 0.05 ETH transfer a day, with its most fee (21,000 gas at 2 gwei raised by 3
      // replacements: 3.90625 gwei) and a little slack (21,000 gas at 20 gwei) for a fill's fee.
      const value = 5n * 10n ** 16n
      const fee = 21_000n * 3_906_250_000n
      const slack = 21_000n * 20n * GWEI
      const cap = value + fee + slack
      const { spendingLimitId } = resultOf(
        'latchkey_create_spending_limit',
        await submit('latchkey_create_spending_limit', {
          spendingLimitName: 'agent allowance',
          scope: { type: 'SPENDING_LIMIT_SCOPE_API_KEY', apiKeyId },
          window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
          asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: CAIP2 },
          amount: cap.toString(),
        } as never),
      )
      resultOf(
        'create_policy',
        await submit('create_policy', {
          policyName: 'agent signs and sends',
          effect: 'EFFECT_ALLOW',
          condition: "activity.resource == 'WALLET' && activity.action in ['SIGN', 'SEND']",
          consensus: `approvers.any(user, user.id == '${userIds[0]}')`,
          notes: '',
        } as never),
      )
      const used = async () =>
        BigInt(
          (
            await h.query('latchkey_list_spending_limits', {}, { as: owner, organizationId })
          ).body.spendingLimits.find(
            (l: { spendingLimitId: string }) => l.spendingLimitId === spendingLimitId,
          ).used,
        )
      await chain.fund(from, 10n ** 18n)
      const startBalance = await chain.balance(from)
      await chain.rpc('evm_setAutomine', [false])
      try {
        const fees = {
          gasLimit: '21000',
          maxFeePerGas: String(2n * GWEI),
          maxPriorityFeePerGas: String(GWEI),
        }
        const first = await submit(
          'eth_send_transaction',
          { from, caip2: CAIP2, calls: [{ to: DEAD, value: value.toString() }], ...fees } as never,
          agent,
        )
        const firstId = resultOf('eth_send_transaction', first).sendTransactionStatusId as string
        expect(await used()).toBe(value + fee)

        const worker = startSendWorker(h.service.runtime, { loop: false })
        await worker.pass() // forwarded to the node, answer lost (504): attempts 1, still PENDING
        let row = (await h.service.store.get('sendTransactions', firstId))!
        expect(row.status).toBe('PENDING')
        expect(row.attempts).toBe(1)
        // Control: the node has the very transaction the service signed.
        expect(gateway.forwarded).toEqual([row.signedTransaction])
        expect(await chain.rpc('eth_getTransactionByHash', [row.txHash])).not.toBeNull()

        h.clock.advance(5_000)
        await worker.pass() // the retry: "txpool is full" -> FAILED
        row = (await h.service.store.get('sendTransactions', firstId))!
        expect(row.status).toBe('FAILED')
        const usedAfterFailure = await used()

        // The agent sends the whole allowance again: the limit now has room for it.
        const second = await submit(
          'eth_send_transaction',
          {
            from,
            caip2: CAIP2,
            calls: [{ to: `0x${'de'.repeat(19)}ad`, value: value.toString() }],
            ...fees,
          } as never,
          agent,
        )
        const secondAccepted = second.status === 200
        // The first transfer, which the node held all along, is mined; then the second.
        await chain.rpc('evm_mine', [])
        h.clock.advance(5_000)
        await worker.pass()
        await chain.rpc('evm_mine', [])
        const firstReceipt = (await chain.rpc('eth_getTransactionReceipt', [row.txHash])) as {
          status: string
        } | null
        const lost = startBalance - (await chain.balance(from))
        const report = {
          cap: cap.toString(),
          usedAfterFailure: usedAfterFailure.toString(),
          firstMined: firstReceipt?.status === '0x1',
          secondAccepted,
          accountLost: lost.toString(),
          usedAtEnd: (await used()).toString(),
          sentValueOfFirst: Transaction.fromHex(row.signedTransaction).raw.value?.toString(),
        }
        // Control: the first transfer reached the chain.
        expect(report.firstMined).toBe(true)
        // Secure behaviour: a send that may have reached a node keeps counting its value...
        expect(
          usedAfterFailure,
          'reservation kept after a broadcast whose answer was lost',
        ).toBeGreaterThanOrEqual(value)
        // ...so the agent's second send of the whole allowance is refused, and the account never
        // loses more than the cap.
        expect(report.secondAccepted).toBe(false)
        expect(lost, 'what the account lost against the cap').toBeLessThanOrEqual(cap)
        await worker.stop()
      } finally {
        await chain.rpc('evm_setAutomine', [true])
      }
    } finally {
      await h.service.close()
    }
  })
})
