import { z } from 'zod'
import { SENDING_DEFAULTS, type SendingOptions } from '../../sending/SendingOptions.ts'

/** A whole number from `min` to `max` whose error names the range and unit. */
const whole = (min: number, max: number, unit: string) => {
  const error = `must be a whole number of ${unit} from ${min} to ${max}`
  return z.int({ error }).min(min, { error }).max(max, { error })
}

/** The RPC timeout an operator may set, in ms (`[sending] rpc_timeout_ms`, `dev --rpc-timeout-ms`). */
export const RPC_TIMEOUT_MS = { min: 100, max: 120_000 } as const

/**
 * `[sending]`: how this instance broadcasts and tracks sends (`eth_send_transaction`,
 * `sol_send_transaction`; docs/sending.md). Absent: the defaults below.
 */
export const sendingSection = z
  .strictObject({
    worker: z
      .boolean({ error: 'must be true or false' })
      .default(SENDING_DEFAULTS.worker)
      .describe(
        "Run the broadcast worker in this instance. Every instance may run one: a send is claimed for a lease (3 × `rpc_timeout_ms`) by one instance at a time. `false` on instances that should only serve requests; at least one instance must run it (a send nobody broadcasts shows on every instance's admin `/readyz` and metrics, and is logged after 2 minutes: docs/operations.md).",
      ),
    poll_interval_ms: whole(50, 60_000, 'milliseconds')
      .default(SENDING_DEFAULTS.pollIntervalMs)
      .describe('How often the worker looks for sends to broadcast or follow, in ms.'),
    rpc_timeout_ms: whole(RPC_TIMEOUT_MS.min, RPC_TIMEOUT_MS.max, 'milliseconds')
      .default(SENDING_DEFAULTS.rpcTimeoutMs)
      .describe(
        'Timeout of each JSON-RPC call to a node, in ms. A send a crashed instance had claimed is taken over 3 × this after its claim.',
      ),
    replace_after_ms: whole(1000, 86_400_000, 'milliseconds')
      .default(SENDING_DEFAULTS.replaceAfterMs)
      .describe(
        "An EVM send broadcast this long ago without a receipt is replaced (same nonce, higher fees), in ms, unless it waits behind a nonce of its sender's that nothing uses (no fee raise fills a gap); one past its replacements, or behind such a gap, is given to the node again if the node no longer has it.",
      ),
    replacement_bump_percent: whole(10, 1000, 'percent')
      .default(SENDING_DEFAULTS.replacementBumpPercent)
      .describe('Fee raise of each replacement, in percent (nodes ask for at least 10).'),
    max_replacements: whole(0, 20, 'replacements')
      .default(SENDING_DEFAULTS.maxReplacements)
      .describe('Most replacements of one send; after them it waits for inclusion.'),
    max_fee_per_gas_ceiling: z
      .string({ error: 'must be a decimal string of wei, e.g. "500000000000"' })
      .regex(/^[1-9]\d{0,30}$/, { error: 'must be a positive decimal string of wei, e.g. "500000000000"' })
      .default(SENDING_DEFAULTS.maxFeePerGasCeiling)
      .describe(
        "Highest `maxFeePerGas` a replacement signs, in wei (a decimal string): a user's send is never re-signed above it. Sponsored sends also stay under `sponsorship.caps.max_fee_per_gas`.",
      ),
  })
  .describe('How this instance broadcasts and follows sends: its worker, timeouts and replacements.')

export type SendingSection = z.infer<typeof sendingSection>

export function sendingOptions(parsed: SendingSection): SendingOptions {
  return {
    worker: parsed.worker,
    pollIntervalMs: parsed.poll_interval_ms,
    rpcTimeoutMs: parsed.rpc_timeout_ms,
    replaceAfterMs: parsed.replace_after_ms,
    replacementBumpPercent: parsed.replacement_bump_percent,
    maxReplacements: parsed.max_replacements,
    maxFeePerGasCeiling: parsed.max_fee_per_gas_ceiling,
  }
}
