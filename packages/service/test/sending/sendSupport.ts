import { readFileSync } from 'node:fs'
import { encodeFunctionData, parseAbi } from 'viem'
import { expect } from 'vitest'
import { type EvmNode, startEvmNode } from '../../../../scripts/evmNode.mjs'
import type { CreateServiceOptions } from '../../src/assembly/createService.ts'
import { deployDelegate } from '../../src/sending/delegate/index.ts'
import type { GasCaps, SendingOptions } from '../../src/sending/SendingOptions.ts'
import { sponsorAddress } from '../../src/sending/sponsors.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  fakeClock,
  type Harness,
  type Json,
  testKey,
} from '../../src/testing/harness.ts'

/** anvil's first development account (funded), which deploys what the tests need. */
export const FAUCET_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
export const TOKEN = '0x00000000000000000000000000000000000070ce'
export const ERC20 = parseAbi([
  'function mint(address to, uint256 amount)',
  'function approve(address spender, uint256 amount) returns (bool)',
  'function transfer(address to, uint256 amount) returns (bool)',
  'function balanceOf(address) view returns (uint256)',
  'function allowance(address, address) view returns (uint256)',
])

export interface Chain {
  node: EvmNode
  url: string
  delegate: string
  rpc(method: string, params: unknown[]): Promise<unknown>
  balance(address: string): Promise<bigint>
  tokenBalance(address: string): Promise<bigint>
  allowance(owner: string, spender: string): Promise<bigint>
  fund(address: string, wei: bigint): Promise<void>
}

/** anvil with LatchkeyDelegate deployed and the test ERC-20 placed at `TOKEN`. */
export async function startChain(): Promise<Chain> {
  const node = await startEvmNode()
  const rpc = (method: string, params: unknown[]) => node.rpc(method, params) as Promise<unknown>
  const delegate = await deployDelegate(node.url, FAUCET_KEY)
  const token = JSON.parse(
    readFileSync(new URL('../../../../contracts/test/TestToken.json', import.meta.url), 'utf8'),
  ) as { deployedBytecode: string }
  await rpc('anvil_setCode', [TOKEN, token.deployedBytecode])
  const read = async (data: string) =>
    BigInt((await rpc('eth_call', [{ to: TOKEN, data }, 'latest'])) as string)
  return {
    node,
    url: node.url,
    delegate,
    rpc,
    balance: async (address) => BigInt((await rpc('eth_getBalance', [address, 'latest'])) as string),
    tokenBalance: (address) =>
      read(encodeFunctionData({ abi: ERC20, functionName: 'balanceOf', args: [address as `0x${string}`] })),
    allowance: (owner, spender) =>
      read(
        encodeFunctionData({
          abi: ERC20,
          functionName: 'allowance',
          args: [owner as `0x${string}`, spender as `0x${string}`],
        }),
      ),
    fund: async (address, wei) => {
      await rpc('anvil_setBalance', [address, `0x${wei.toString(16)}`])
    },
  }
}

export const erc20Call = (functionName: 'mint' | 'approve' | 'transfer', to: string, amount: bigint) => ({
  to: TOKEN,
  value: '0',
  data: encodeFunctionData({ abi: ERC20, functionName, args: [to as `0x${string}`, amount] }),
})

/** Polls `get_send_transaction_status` until the send is final (or `timeoutMs` passes). */
/**
 * The send's row once its worker replaced it `replacements` times (a stuck send: the node mines
 * nothing), the service's clock following real time meanwhile; the row as it is after 15 s.
 */
export async function waitForReplacements(h: Harness, sendTransactionStatusId: string, replacements: number) {
  const until = Date.now() + 15_000
  let row = (await h.service.store.get('sendTransactions', sendTransactionStatusId))!
  while (row.replacements < replacements && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 30))
    h.clock.set(Date.now())
    row = (await h.service.store.get('sendTransactions', sendTransactionStatusId))!
  }
  return row
}

/**
 * Runs `worker`'s passes by hand until `reached` answers true: the service's clock moved `stepMs`
 * before each, `pauseMs` of real time between them, for at most `withinMs` of real time (the
 * caller's expectation then says what was not reached). anvil answers a broadcast before the block
 * that mines it is there (its instant mining runs beside the answer, a few milliseconds later, more
 * under load): a fixed number of passes, run back to back, may all ask for a receipt too early.
 */
export async function passUntil(
  h: Pick<Harness, 'clock'>,
  worker: { pass(): Promise<void> },
  reached: () => Promise<boolean>,
  {
    stepMs = 300,
    pauseMs = 20,
    withinMs = 15_000,
  }: { stepMs?: number; pauseMs?: number; withinMs?: number } = {},
): Promise<void> {
  const until = Date.now() + withinMs
  while (!(await reached()) && Date.now() < until) {
    h.clock.advance(stepMs)
    await worker.pass()
    if (await reached()) return
    await new Promise((resolve) => setTimeout(resolve, pauseMs))
  }
}

/** The receipt of `hash` once `chain` has mined it (anvil mines after it answers the broadcast); null after `withinMs`. */
export async function receiptOf(chain: Pick<Chain, 'rpc'>, hash: string, withinMs = 15_000) {
  const until = Date.now() + withinMs
  for (;;) {
    const receipt = (await chain.rpc('eth_getTransactionReceipt', [hash])) as {
      status: string
      gasUsed: string
      effectiveGasPrice: string
    } | null
    if (receipt || Date.now() > until) return receipt
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

export async function waitForSend(
  h: Harness,
  sendTransactionStatusId: string,
  options: {
    organizationId?: string
    as?: Parameters<Harness['query']>[2] extends infer O ? O : never
    timeoutMs?: number
  } = {},
) {
  const until = Date.now() + (options.timeoutMs ?? 10_000)
  for (;;) {
    // The worker reads the service's clock: a test's frozen clock follows real time while it waits.
    h.clock.set(Math.max(h.clock.now(), Date.now()))
    const reply = await h.query(
      'get_send_transaction_status',
      {
        sendTransactionStatusId,
        ...(options.organizationId ? { organizationId: options.organizationId } : {}),
      },
      (options.as ?? {}) as never,
    )
    expect(reply.status).toBe(200)
    if (['INCLUDED', 'FAILED', 'CANCELLED'].includes(reply.body.txStatus)) return reply.body
    if (Date.now() > until) throw new Error(`send ${sendTransactionStatusId} still ${reply.body.txStatus}`)
    await new Promise((resolve) => setTimeout(resolve, 30))
  }
}

/** A service on `chain` (eip155:31337) whose sponsor holds 10 ETH and pays within `caps`. */
export async function sponsoredService(
  chain: Chain,
  caps: GasCaps = {},
  sending: SendingOptions = {},
  more: Partial<CreateServiceOptions> = {},
): Promise<Harness> {
  const caip2 = 'eip155:31337'
  const h = await createHarness({
    ...more,
    clock: fakeClock(Date.now()),
    rpc: { [caip2]: chain.url },
    sending: { pollIntervalMs: 20, ...sending },
    sponsorship: { delegates: { [caip2]: chain.delegate }, caps },
  })
  await chain.fund(sponsorAddress(h.service.runtime)!, 10n ** 19n)
  return h
}

/** A sub-organization (an app's end user) with one Ethereum account and no ETH; `send` submits from it. */
export async function endUser(h: Harness) {
  const key = testKey()
  const sub = await h.createSubOrganization({
    keys: [key],
    wallet: { walletName: 'Main', accounts: [ETHEREUM_ACCOUNT] },
  })
  const as = { organizationId: sub.organizationId, as: key }
  return {
    ...sub,
    from: sub.addresses![0]!,
    as,
    send: (parameters: Json) => {
      h.clock.set(Date.now())
      return h.submit(
        'eth_send_transaction',
        { from: sub.addresses![0], caip2: 'eip155:31337', ...parameters },
        as,
      )
    },
  }
}

/**
 * A `fetch` for the service's JSON-RPC calls that answers `eth_sendRawTransaction` of every
 * transaction `refuse` picks with the node's refusal `message` (as geth refuses a 7702 transaction
 * whose authority has transactions pending: "authority already reserved"), once `hold` resolves;
 * every other call reaches the node.
 */
export function refusingNode(
  refuse: (raw: string) => boolean,
  options: { message?: string; hold?: Promise<unknown> } = {},
): typeof fetch {
  return async (input, init) => {
    const body = JSON.parse(String(init?.body)) as { id: number; method: string; params: string[] }
    if (body.method === 'eth_sendRawTransaction' && refuse(body.params[0]!)) {
      await options.hold
      const error = { code: -32000, message: options.message ?? 'authority already reserved' }
      return new Response(JSON.stringify({ jsonrpc: '2.0', id: body.id, error }), {
        headers: { 'content-type': 'application/json' },
      })
    }
    return fetch(input, init)
  }
}

/** How many sends the service has recorded. */
export const sendCount = async (h: Harness) => (await h.service.store.all('sendTransactions')).length
