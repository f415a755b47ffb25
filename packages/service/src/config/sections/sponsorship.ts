import { z } from 'zod'
import type { GasCaps, SponsorshipOptions } from '../../sending/SendingOptions.ts'

const gas = z.number().int().positive()
// Wei overflow TOML's integers (9.2 ETH at most) and JavaScript's safe ones: a decimal string.
const wei = z
  .string({ error: 'must be a decimal string of wei, e.g. "50000000000000000"' })
  .regex(/^[1-9]\d{0,30}$/, { error: 'must be a positive decimal string of wei, e.g. "50000000000000000"' })

const capsSchema = z
  .object({
    per_transaction: gas.optional().describe('Largest gas limit of one sponsored transaction.'),
    per_user_per_day: gas
      .optional()
      .describe(
        "Gas of one end user's sponsored sends per UTC day, counted at signing (their gas limits). An end user is a sub-organization, whatever users it has; in the parent organization itself, each user.",
      ),
    per_organization_per_month: gas
      .optional()
      .describe("Gas of an organization's (and its sub-organizations') sponsored sends per UTC month."),
    per_transaction_wei: wei
      .optional()
      .describe(
        'Largest cost of one sponsored transaction in wei (its gas limit × the highest max fee per gas it or a replacement of it may offer, and its L1 data fee), judged at signing, a decimal string.',
      ),
    per_user_per_day_wei: wei
      .optional()
      .describe(
        "Cost of one end user's sponsored sends per UTC day in wei (of each, its gas limit × the highest max fee per gas it or a replacement of it may offer, counted at signing: its replacements never count more), a decimal string. An end user is a sub-organization, as for `per_user_per_day`.",
      ),
    per_organization_per_month_wei: wei
      .optional()
      .describe(
        "Cost of an organization's (and its sub-organizations') sponsored sends per UTC month in wei, a decimal string.",
      ),
    max_fee_per_gas: wei
      .optional()
      .describe(
        "Ceiling of a sponsored send's `maxFeePerGas` in wei, a decimal string: a caller's above it is refused (400 naming the field), the node's suggestion is lowered to it, and while the network's base fee is above it sponsored sends are refused (429 `GAS_CAP_EXCEEDED`). Replacements stay under it. Default: 500 gwei (`\"500000000000\"`, the ceiling every replacement has).",
      ),
    max_priority_fee_per_gas: wei
      .optional()
      .describe(
        "Ceiling of a sponsored send's `maxPriorityFeePerGas` (tip) in wei, a decimal string: a sponsored send starts at a tip that its replacements can raise (by `sending.replacement_bump_percent`, `sending.max_replacements` times) without passing it: a caller's tip above that is refused (400 naming the field, its `maximum`), the node's suggestion is lowered to it. Default: the `max_fee_per_gas` ceiling.",
      ),
    max_compute_unit_price: gas
      .optional()
      .describe(
        "Ceiling of the priority fee's price a sponsored Solana transaction offers (its `SetComputeUnitPrice`), in micro-lamports per compute unit: a transaction offering more is refused (400 naming `parameters.unsignedTransaction`) before anything is signed. Default: 1,000,000 (1 lamport a compute unit, at most 0.0014 SOL of priority fee a transaction).",
      ),
    per_transaction_lamports: gas
      .optional()
      .describe('Largest fee of one sponsored Solana transaction, in lamports.'),
    per_user_per_day_lamports: gas
      .optional()
      .describe(
        "Fees of one end user's sponsored Solana sends per UTC day, in lamports (counted at signing). An end user is a sub-organization, as for `per_user_per_day`.",
      ),
    per_organization_per_month_lamports: gas
      .optional()
      .describe(
        "Fees of an organization's (and its sub-organizations') sponsored Solana sends per UTC month, in lamports.",
      ),
  })
  .strict()

/**
 * `[sponsorship]`: gas sponsorship. Sponsor keys are sealed in the database on the first start
 * (imported from `private_key`, or generated when it is absent); later starts use the sealed key.
 */
export const sponsorshipSection = z
  .object({
    delegates: z
      .record(z.string().regex(/^eip155:[1-9]\d*$/), z.string().regex(/^0x[0-9a-fA-F]{40}$/))
      .describe(
        'The EIP-7702 delegate contract (LatchkeyDelegate) by CAIP-2 chain; sponsorship is offered on these chains.',
      ),
    sponsors: z
      .record(
        z.string().min(1),
        z
          .object({
            private_key: z
              .string()
              .regex(/^(0x)?[0-9a-fA-F]{64}$/)
              .meta({ secret: true })
              .optional()
              .describe(
                'The sponsor account key (32 bytes hex), imported and sealed on the first start; generated when absent. A secret: give it as `private_key_file` or the env var.',
              ),
            solana_private_key: z
              .string()
              .regex(/^(0x)?[0-9a-fA-F]{64}$/)
              .meta({ secret: true })
              .optional()
              .describe(
                'The Solana fee payer key (its 32-byte ed25519 seed, hex), imported and sealed on the first start; generated when absent. Solana sponsorship is offered on every `solana:` chain of `[rpc]`. A secret: give it as `solana_private_key_file` or the env var.',
              ),
          })
          .strict(),
      )
      .default({ default: {} })
      .describe(
        'Sponsor accounts by owner: `default`, or an organization id (a parent organization covers its sub-organizations).',
      ),
    low_balance_wei: z
      .union([
        z.string().regex(/^\d{1,30}$/, { error: 'must be a whole number of wei, e.g. "50000000000000000"' }),
        z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
      ])
      .optional()
      .describe(
        'An EVM sponsor holding less than this many wei (decimal; a string for large values: "50000000000000000" is 0.05 ETH) shows `low: true` in `/readyz` of the admin listener and `latchkey_sponsor_balance_low` 1. Informative only: the service stays ready.',
      ),
    low_balance_lamports: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe(
        'A Solana fee payer holding less than this many lamports shows `low: true` in `/readyz` of the admin listener and `latchkey_sponsor_balance_low` 1. Informative only: the service stays ready.',
      ),
    balance_check_seconds: z
      .number()
      .int()
      .min(5)
      .max(86_400)
      .default(60)
      .describe(
        "How often `start` reads each sponsor's balance on each chain it pays on (probes and scrapes read the last look; never an RPC call per probe).",
      ),
    caps: capsSchema
      .default({})
      .describe('Gas, wei and lamport caps and fee ceilings of every organization.'),
    organization_caps: z
      .record(z.string().min(1), capsSchema)
      .default({})
      .describe('Caps and fee ceilings of particular (parent) organizations, replacing `caps` for them.'),
  })
  .strict()
  .describe('Gas sponsorship: sponsor accounts pay for `sponsor: true` sends, within caps.')

const capsOf = (caps: z.infer<typeof capsSchema>): GasCaps => ({
  ...(caps.per_transaction !== undefined ? { perTransaction: caps.per_transaction } : {}),
  ...(caps.per_user_per_day !== undefined ? { perUserPerDay: caps.per_user_per_day } : {}),
  ...(caps.per_organization_per_month !== undefined
    ? { perOrganizationPerMonth: caps.per_organization_per_month }
    : {}),
  ...(caps.per_transaction_wei !== undefined ? { perTransactionWei: caps.per_transaction_wei } : {}),
  ...(caps.per_user_per_day_wei !== undefined ? { perUserPerDayWei: caps.per_user_per_day_wei } : {}),
  ...(caps.per_organization_per_month_wei !== undefined
    ? { perOrganizationPerMonthWei: caps.per_organization_per_month_wei }
    : {}),
  ...(caps.max_fee_per_gas !== undefined ? { maxFeePerGas: caps.max_fee_per_gas } : {}),
  ...(caps.max_priority_fee_per_gas !== undefined
    ? { maxPriorityFeePerGas: caps.max_priority_fee_per_gas }
    : {}),
  ...(caps.max_compute_unit_price !== undefined ? { maxComputeUnitPrice: caps.max_compute_unit_price } : {}),
  ...(caps.per_transaction_lamports !== undefined
    ? { perTransactionLamports: caps.per_transaction_lamports }
    : {}),
  ...(caps.per_user_per_day_lamports !== undefined
    ? { perUserPerDayLamports: caps.per_user_per_day_lamports }
    : {}),
  ...(caps.per_organization_per_month_lamports !== undefined
    ? { perOrganizationPerMonthLamports: caps.per_organization_per_month_lamports }
    : {}),
})

/** `CreateServiceOptions.sponsorship` from the parsed section. */
export function sponsorshipOptions(parsed: z.infer<typeof sponsorshipSection>): SponsorshipOptions {
  return {
    delegates: parsed.delegates,
    sponsors: Object.fromEntries(
      Object.entries(parsed.sponsors).map(([owner, sponsor]) => [
        owner,
        {
          ...(sponsor.private_key !== undefined ? { privateKey: sponsor.private_key } : {}),
          ...(sponsor.solana_private_key !== undefined
            ? { solanaPrivateKey: sponsor.solana_private_key }
            : {}),
        },
      ]),
    ),
    caps: capsOf(parsed.caps),
    organizationCaps: Object.fromEntries(
      Object.entries(parsed.organization_caps).map(([organization, caps]) => [organization, capsOf(caps)]),
    ),
  }
}

/** What `start`'s sponsor-balance watch needs from the section (`watchSponsorBalances`). */
export function sponsorBalanceOptions(parsed: z.infer<typeof sponsorshipSection>): {
  lowWei: bigint | undefined
  lowLamports: bigint | undefined
  intervalMs: number
  evmChains: string[]
} {
  return {
    lowWei: parsed.low_balance_wei === undefined ? undefined : BigInt(parsed.low_balance_wei),
    lowLamports: parsed.low_balance_lamports === undefined ? undefined : BigInt(parsed.low_balance_lamports),
    intervalMs: parsed.balance_check_seconds * 1000,
    evmChains: Object.keys(parsed.delegates),
  }
}
