import { z } from 'zod'
import type { LimitsOptions } from '../../limits/limitsWing.ts'

/** A CAIP-2 EVM chain id, as a native limit names its chain. */
const EVM_CAIP2 = /^eip155:[1-9]\d{0,15}$/

/**
 * `[limits]`: spending limits (docs/spending-limits.md). Absent: the service's own list of chains
 * where a native limit signs calls into contracts and an ERC-20 limit signs value
 * (limits/valueOnlyChains.ts), and no other.
 */
export const limitsSection = z
  .object({
    value_only_chains: z
      .array(
        z
          .string()
          .max(24)
          .regex(EVM_CAIP2, { error: "must be an EVM CAIP-2 chain id such as 'eip155:7777777'" }),
      )
      .max(100)
      .default([])
      .describe(
        "EVM chains, besides the service's own list (docs/spending-limits.md), whose native coin leaves an account only as a call's value (no precompile or system contract moves the caller's balance when called with none), e.g. ['eip155:7777777'] for your own OP Stack chain. Under a native spending limit of such a chain a call with calldata into a contract is signed and its value counted; on a chain on neither list it is refused SPEND_UNDECODABLE, since a precompile there may move the coin without value (as Sei's IBC and Cosmos EVM's native-coin ERC-20 do). Naming a chain also says no ERC-20 there is the coin itself (as Evmos' WEVMOS and Metis' METIS are): under an ERC-20 limit of such a chain a call that sends value is signed, the value not counted; on a chain on neither list (nor among those whose coin contract the service knows) it is refused SPEND_UNDECODABLE. Name a chain only once you have checked this.",
      ),
  })
  .strict()
  .describe(
    'Spending limits: the chains whose native coin moves only as value, besides the service’s own list.',
  )

export type LimitsSection = z.infer<typeof limitsSection>

/** The parsed `[limits]` section as `CreateServiceOptions.limits`. */
export function limitsOptions(parsed: LimitsSection): LimitsOptions {
  return { valueOnlyChains: parsed.value_only_chains }
}
