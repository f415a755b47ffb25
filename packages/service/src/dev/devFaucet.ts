// Node only: funding accounts on the local EVM node of `latchkey-service dev --evm`, from the
// command line (`--fund`) and from an app (`POST /dev/faucet`, a dev surface like the outbox).
import { FieldError, UnavailableError } from '../kernel/base/errors.ts'
import type { ServicePlugin } from '../kernel/registry.ts'
import { localOnly } from '../pipeline/originPolicy.ts'

/** What `--fund <address>` and the faucet give when no amount is named. */
export const DEFAULT_FUND_ETH = '100'
/** The most one faucet request or `--fund` entry gives, so a typo cannot mint a fortune. */
export const MAX_FUND_ETH = 1_000_000n

const WEI_PER_ETH = 10n ** 18n

/** `'1.5'` ETH as wei; undefined unless it is a plain decimal of at most 18 fraction digits. */
export function parseEth(text: string): bigint | undefined {
  const match = /^(\d{1,30})(?:\.(\d{1,18}))?$/.exec(text)
  if (!match) return undefined
  return BigInt(match[1]!) * WEI_PER_ETH + BigInt((match[2] ?? '').padEnd(18, '0'))
}

/** Wei as a decimal ETH string without trailing zeros (`1500000000000000000n` → `'1.5'`). */
export function formatEth(wei: bigint): string {
  const whole = wei / WEI_PER_ETH
  const fraction = (wei % WEI_PER_ETH).toString().padStart(18, '0').replace(/0+$/, '')
  return fraction === '' ? whole.toString() : `${whole}.${fraction}`
}

/** One `--fund` entry: `0x…` or `0x…=<eth>`. */
export interface FundEntry {
  address: `0x${string}`
  wei: bigint
}

/** Parses `0x<40 hex>[=<eth>]`; undefined when it is not one. */
export function parseFundEntry(text: string): FundEntry | undefined {
  const match = /^(0x[0-9a-fA-F]{40})(?:=(.+))?$/.exec(text)
  if (!match) return undefined
  const wei = parseEth(match[2] ?? DEFAULT_FUND_ETH)
  if (wei === undefined || wei === 0n || wei > MAX_FUND_ETH * WEI_PER_ETH) return undefined
  return { address: match[1] as `0x${string}`, wei }
}

/** The JSON-RPC calls the faucet makes (an EvmNode's `rpc`). */
export type NodeRpc = (method: string, params?: unknown[]) => Promise<unknown>

/**
 * Adds `wei` to the balance of `address` (anvil's `anvil_setBalance`: no transaction, so no dev
 * account's nonce moves under a sender's feet). Resolves with the new balance in wei.
 */
export async function fundAccount(rpc: NodeRpc, address: string, wei: bigint): Promise<bigint> {
  const balance = BigInt((await rpc('eth_getBalance', [address, 'latest'])) as string)
  const next = balance + wei
  await rpc('anvil_setBalance', [address, `0x${next.toString(16)}`])
  return next
}

/**
 * `POST /dev/faucet` with `{ "address": "0x…", "eth"?: "1.5" }` (default 100 ETH): adds that
 * much to the account's balance on the local node and answers `{ address, chainId, balance }`
 * (balance in ETH, as a string). Dev mode only; loopback clients and allowed origins only.
 */
export function devFaucetPlugin(node: { rpc: NodeRpc; chainId: number }): ServicePlugin {
  return {
    name: 'dev-faucet',
    routes(app, runtime) {
      if (runtime.options.mode === 'production') return
      app.use('/dev/faucet', localOnly(runtime, { methods: ['POST'], headers: ['Content-Type'] }))
      app.post('/dev/faucet', async (c) => {
        let body: unknown
        try {
          body = await c.req.json()
        } catch {
          throw new FieldError({
            code: 'BODY_INVALID',
            message: 'the faucet takes a JSON body: { "address": "0x…", "eth": "1" }',
          })
        }
        const { address, eth } = (body ?? {}) as { address?: unknown; eth?: unknown }
        if (typeof address !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(address))
          throw new FieldError({ field: 'address', reason: 'must be a 0x-prefixed 20-byte hex address' })
        const amount = eth === undefined ? DEFAULT_FUND_ETH : eth
        const wei = typeof amount === 'string' ? parseEth(amount) : undefined
        if (wei === undefined || wei === 0n || wei > MAX_FUND_ETH * WEI_PER_ETH)
          throw new FieldError({
            field: 'eth',
            reason: `must be a decimal string from 0.000000000000000001 to ${MAX_FUND_ETH} (e.g. "1.5")`,
          })
        let balance: bigint
        try {
          balance = await fundAccount(node.rpc, address, wei)
        } catch (error) {
          throw new UnavailableError({
            code: 'RPC_FAILED',
            message: `the local EVM node did not fund ${address}: ${(error as Error).message}`,
          })
        }
        return c.json({ address, chainId: node.chainId, balance: formatEth(balance) })
      })
    },
  }
}
