// A transaction signed (and counted) under a spending limit, handed back to the service with
// eth_send_raw_transaction, is never signed again by the send worker: it once "replaced" it, stuck,
// with the account's key at fees raised 25% a time that no spending limit counted (an agent at its
// whole cap got versions costing 1.56 times it). A raw send waits at the price its signer chose.
import { Transaction } from 'micro-eth-signer'
import { afterEach, describe, expect, it } from 'vitest'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  fakeClock,
  type Harness,
  resultOf,
  testKey,
} from '../../src/testing/harness.ts'
import { DEAD_ADDRESS as DEAD, unsignedTransfer } from '../../src/testing/unsignedTransfer.ts'
import { agentUser } from './agentGrant.ts'

const CAIP2 = 'eip155:31337'
const GWEI = 10n ** 9n

/** A JSON-RPC node that takes every transaction and never mines one (a send stays stuck). */
function stuckNode() {
  const broadcast: string[] = []
  const fetch: typeof globalThis.fetch = async (_input, init) => {
    const body = JSON.parse(String(init?.body)) as { id: number; method: string; params: unknown[] }
    let result: unknown = null
    switch (body.method) {
      case 'eth_chainId':
        result = '0x7a69'
        break
      case 'eth_getBalance':
        result = `0x${(10n ** 21n).toString(16)}`
        break
      case 'eth_getTransactionCount':
        result = '0x0'
        break
      case 'eth_sendRawTransaction': {
        const raw = String(body.params[0])
        broadcast.push(raw)
        result = Transaction.fromHex(raw.replace(/^0x/, '')).hash
        break
      }
      case 'eth_getTransactionByHash':
        result = { hash: body.params[0] }
        break
      case 'eth_getBlockByNumber':
        result = { number: '0x1', baseFeePerGas: '0x1' }
        break
      case 'eth_maxPriorityFeePerGas':
      case 'eth_gasPrice':
        result = '0x1'
        break
      default:
        result = null
    }
    return new Response(JSON.stringify({ jsonrpc: '2.0', id: body.id, result }), {
      headers: { 'content-type': 'application/json' },
    })
  }
  return { fetch, broadcast }
}

let h: Harness | undefined
afterEach(async () => {
  await (h?.service as { close?: () => Promise<void> } | undefined)?.close?.()
  h = undefined
})

describe('eth_send_raw_transaction under a spending limit', () => {
  it("an agent's counted transaction, sent raw, is never re-signed at a fee its limit did not count", async () => {
    const node = stuckNode()
    h = await createHarness({
      clock: fakeClock(Date.now()),
      rpc: { [CAIP2]: 'http://stuck-node.invalid/' },
      fetch: node.fetch,
      sending: { pollIntervalMs: 20, replaceAfterMs: 50 },
    } as never)
    const sub = await h.createSubOrganization({ wallet: { walletName: 'W', accounts: [ETHEREUM_ACCOUNT] } })
    const owner = sub.keys[0]!
    const from = sub.addresses![0]!
    const organizationId = sub.organizationId
    const submit = (path: Parameters<Harness['submit']>[0], parameters: never, as = owner) => {
      h!.clock.set(Math.max(h!.clock.now() + 1, Date.now()))
      return h!.submit(path, parameters, { as, organizationId })
    }
    // An agent's grant: a non-root user holding the agent's key, a limit on that key, a policy
    // letting it sign and send on any chain (wider than the kit's grantAgentAllowance, which pins
    // the limit's chain and asset: here the limit alone must hold).
    const agent = testKey()
    const { userIds } = resultOf('create_users', await submit('create_users', agentUser(agent) as never))
    const keys = await h.query('get_api_keys', { userId: userIds[0] }, { as: owner, organizationId })
    const apiKeyId = keys.body.apiKeys[0].apiKeyId as string
    // The allowance: exactly one transaction of 1,000,000 gas at 100 gwei (0.1 ETH) a day.
    const cap = 1_000_000n * 100n * GWEI
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

    // The agent signs one transaction whose whole cost fits the allowance exactly...
    const unsigned = unsignedTransfer({
      chainId: 31337,
      nonce: 0,
      maxFeePerGas: 100n * GWEI,
      gas: 1_000_000n,
      to: DEAD,
      value: 0n,
    })
    const signed = await submit(
      'sign_transaction',
      { signWith: from, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: unsigned } as never,
      agent,
    )
    const signedTransaction = resultOf('sign_transaction', signed).signedTransaction as string
    const list = async () =>
      (await h!.query('latchkey_list_spending_limits', {}, { as: owner, organizationId })).body.spendingLimits
    expect(
      (await list()).find((l: { spendingLimitId: string }) => l.spendingLimitId === spendingLimitId),
    ).toMatchObject({
      used: cap.toString(),
      remaining: '0',
    })
    // The agent hands the signed transaction to the service's broadcaster.
    const sent = await submit(
      'eth_send_raw_transaction',
      { signedTransaction: `0x${signedTransaction}`, caip2: CAIP2 } as never,
      agent,
    )
    expect(sent.status).toBe(200)
    const row = (await h.service.store.all('sendTransactions'))[0]!

    // Stuck in the pool, the worker replaces it: each replacement is a new signature by the
    // account's key. Wait for the worker's replacements (or 3 s).
    const until = Date.now() + 3_000
    let current = row
    while (current.replacements < 3 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 30))
      h.clock.set(Date.now())
      current = (await h.service.store.get('sendTransactions', row.id))!
    }

    // Every transaction the service signed with the limited key must fit what the limit counted.
    const signedByKey = [signedTransaction, ...node.broadcast].map((raw) =>
      Transaction.fromHex(raw.replace(/^0x/, '')),
    )
    for (const tx of signedByKey) expect(tx.sender.toLowerCase()).toBe(from.toLowerCase())
    const used = BigInt(
      (await list()).find((l: { spendingLimitId: string }) => l.spendingLimitId === spendingLimitId).used,
    )
    const mostCost = signedByKey
      .map((tx) => {
        const raw = tx.raw as { gasLimit: bigint; maxFeePerGas: bigint; value: bigint }
        return raw.gasLimit * raw.maxFeePerGas + raw.value
      })
      .reduce((a, b) => (a > b ? a : b))
    expect(used).toBe(cap)
    expect(
      mostCost,
      'most a version signed with the limited key can cost, against the cap',
    ).toBeLessThanOrEqual(cap)
  })
})
