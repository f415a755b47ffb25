/**
 * Limits on what a sponsor pays, in gas and in wei (gas limit × max fee per gas) on EVM chains and
 * in lamports of fees on Solana; a send over one is refused (`GAS_CAP_EXCEEDED`) before signing.
 * The fee ceilings bound the price of a sponsored EVM send, whether the caller or the node set it.
 */
export interface GasCaps {
  /** Largest gas limit of one sponsored transaction. @default no cap */
  perTransaction?: number
  /**
   * Gas of one end user's sponsored sends per UTC day (their gas limits, counted when signed): a
   * sub-organization, whatever users it has; in the parent organization itself, each user. @default no cap
   */
  perUserPerDay?: number
  /** Gas of an organization's (and its sub-organizations') sponsored sends per UTC month. @default no cap */
  perOrganizationPerMonth?: number
  /**
   * Largest cost of one sponsored transaction (gas limit × the highest max fee per gas it or a
   * replacement of it may offer, and its L1 data fee), judged at signing, decimal wei. @default no cap
   */
  perTransactionWei?: string
  /**
   * Cost of one end user's (sub-organization's) sponsored sends per UTC day, decimal wei: each
   * counted when signed at its gas limit × the highest max fee per gas it or a replacement of it
   * may offer (`prepaidMaxFeePerGas`), so its replacements count nothing more; once it is mined,
   * what it cost (the rest is given back). @default no cap
   */
  perUserPerDayWei?: string
  /** Cost of an organization's (and its sub-organizations') sponsored sends per UTC month, decimal wei. @default no cap */
  perOrganizationPerMonthWei?: string
  /**
   * Highest `maxFeePerGas` of a sponsored send, decimal wei: a caller's above it is refused
   * (400 naming `parameters.maxFeePerGas`), the node's suggestion is lowered to it, and a network
   * whose base fee is above it refuses sponsored sends (`GAS_CAP_EXCEEDED`) until the fee falls.
   * Replacements of sponsored sends stay under it too. @default `sending.maxFeePerGasCeiling`
   */
  maxFeePerGas?: string
  /**
   * Highest `maxPriorityFeePerGas` (tip) of a sponsored send or a replacement of it, decimal wei:
   * a send starts at most at the tip its replacements can raise without passing it
   * (`mostStartingTip`); a caller's above that is refused (400 naming the field, its `maximum`),
   * the node's suggestion lowered to it. @default the `maxFeePerGas` ceiling
   */
  maxPriorityFeePerGas?: string
  /**
   * Highest price a sponsored Solana transaction may offer for its compute units (its
   * `SetComputeUnitPrice`), in micro-lamports per compute unit: a transaction offering more is
   * refused (400 naming `parameters.unsignedTransaction`) before anything is signed. With the most
   * compute units a transaction may ask for (1,400,000), the default bounds one transaction's
   * priority fee at 1,400,000 lamports (0.0014 SOL). @default 1000000
   */
  maxComputeUnitPrice?: number
  /** Largest fee of one sponsored Solana transaction, in lamports. @default no cap */
  perTransactionLamports?: number
  /** Fees of one end user's (sub-organization's) sponsored Solana sends per UTC day, in lamports (counted when signed). @default no cap */
  perUserPerDayLamports?: number
  /** Fees of an organization's sponsored Solana sends per UTC month, in lamports. @default no cap */
  perOrganizationPerMonthLamports?: number
}

/**
 * Gas sponsorship: sponsor accounts held by the service pay for `sponsor: true` sends. Sponsor keys
 * are sealed in the database like every key: a sponsor listed here without `privateKey` gets a
 * fresh key on the first start, one with `privateKey` has it imported on the first start; later
 * starts use the sealed key (`sponsorAddress` tells the operator which address to fund).
 */
export interface SponsorshipOptions {
  /** The EIP-7702 delegate contract (LatchkeyDelegate) by CAIP-2 chain: sponsorship is offered on these chains. */
  delegates: Record<string, string>
  /**
   * Sponsor accounts by owner: `default` (every organization without its own) or an organization
   * id (a parent organization covers its sub-organizations). `privateKey` is the EVM key (32 bytes
   * of hex), `solanaPrivateKey` the Solana fee payer's ed25519 seed (32 bytes of hex); each is
   * generated when absent. Solana sponsorship is offered on every `solana:` chain with an RPC node.
   * @default { default: {} }
   */
  sponsors?: Record<string, { privateKey?: string; solanaPrivateKey?: string }>
  /** Caps of every organization. @default no caps */
  caps?: GasCaps
  /** Caps of particular organizations (parent organization ids), replacing `caps` for them. @default {} */
  organizationCaps?: Record<string, GasCaps>
}

/** How the service broadcasts and tracks sends. */
export interface SendingOptions {
  /** Run the broadcast worker in this instance. @default true */
  worker?: boolean
  /** How often the worker looks for sends to broadcast or track, in ms. @default 250 */
  pollIntervalMs?: number
  /** Timeout of each JSON-RPC call, in ms. @default 10000 */
  rpcTimeoutMs?: number
  /**
   * A broadcast send without a receipt this long is replaced (same nonce, higher fees), in ms; not
   * one behind a gap of its sender's nonces, which no fee raise fills. @default 60000
   */
  replaceAfterMs?: number
  /** Fee raise of each replacement, in percent (nodes ask for at least 10). @default 25 */
  replacementBumpPercent?: number
  /** Most replacements of one send; after them it waits for inclusion. @default 3 */
  maxReplacements?: number
  /** Highest `maxFeePerGas` a replacement signs, decimal wei. @default "500000000000" (500 gwei) */
  maxFeePerGasCeiling?: string
}

export const SENDING_DEFAULTS = {
  worker: true,
  pollIntervalMs: 250,
  rpcTimeoutMs: 10_000,
  replaceAfterMs: 60_000,
  replacementBumpPercent: 25,
  maxReplacements: 3,
  maxFeePerGasCeiling: '500000000000',
} as const satisfies Required<SendingOptions>
