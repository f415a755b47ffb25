import { topLevelOf } from '../domain/organizations.ts'
import { LimitError } from '../kernel/base/errors.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { ActivityContext } from '../kernel/registry.ts'
import type { OrganizationRow } from '../kernel/store/model.ts'
import type { Transaction } from '../kernel/store/Transaction.ts'
import type { GasCaps } from './SendingOptions.ts'
import { SENDING } from './sendingState.ts'

const utcDay = (now: number) => new Date(now).toISOString().slice(0, 10)
const utcMonth = (now: number) => new Date(now).toISOString().slice(0, 7)

/**
 * What the caps and ceilings of an organization are found by: its id and parent. A sponsored send
 * whose sub-organization was deleted is judged under a stand-in with the parent it recorded
 * (`SendTransactionRow.capsOrganizationId`).
 */
export type CapsOrganization = Pick<OrganizationRow, 'id' | 'parentOrganizationId'>

/** The caps of `organization`: its parent's (or its own) `organizationCaps`, else `caps`. */
export function capsOf(runtime: Runtime, organization: CapsOrganization): GasCaps {
  const { sponsorship } = runtime.stateOf(SENDING)
  const organizationId = topLevelOf(organization)
  return sponsorship?.organizationCaps?.[organizationId] ?? sponsorship?.caps ?? {}
}

/**
 * The fee ceilings of `organization`'s sponsored sends, wei: `maxFeePerGas` (default: the
 * replacements' `sending.maxFeePerGasCeiling`) and `maxPriorityFeePerGas` (default: the former).
 */
export function feeCeilingsOf(
  runtime: Runtime,
  organization: CapsOrganization,
): { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } {
  const caps = capsOf(runtime, organization)
  const maxFeePerGas = BigInt(caps.maxFeePerGas ?? runtime.stateOf(SENDING).sending.maxFeePerGasCeiling)
  const tip = caps.maxPriorityFeePerGas === undefined ? maxFeePerGas : BigInt(caps.maxPriorityFeePerGas)
  return { maxFeePerGas, maxPriorityFeePerGas: tip < maxFeePerGas ? tip : maxFeePerGas }
}

/** `maxComputeUnitPrice`'s default, micro-lamports per compute unit. */
export const DEFAULT_MAX_COMPUTE_UNIT_PRICE = 1_000_000

/** The highest compute unit price (micro-lamports) a sponsored Solana send of `organization` may offer. */
export function computeUnitPriceCeilingOf(runtime: Runtime, organization: OrganizationRow): bigint {
  return BigInt(capsOf(runtime, organization).maxComputeUnitPrice ?? DEFAULT_MAX_COMPUTE_UNIT_PRICE)
}

/** What counting a send needs: an activity's context, or the worker's for a replacement. */
export type CapContext = Pick<ActivityContext, 'tx' | 'runtime' | 'now' | 'newId'> & {
  organization: CapsOrganization
  caller: { userId: string }
}

/** Which caps a send counts against: gas or wei (EVM) or lamports of fees (Solana). */
const UNITS = {
  gas: {
    perTransaction: 'perTransaction',
    perUserPerDay: 'perUserPerDay',
    perOrganizationPerMonth: 'perOrganizationPerMonth',
    suffix: '',
  },
  wei: {
    perTransaction: 'perTransactionWei',
    perUserPerDay: 'perUserPerDayWei',
    perOrganizationPerMonth: 'perOrganizationPerMonthWei',
    // Wei are counted in their own ranges, beside the gas of the same sends.
    suffix: '|wei',
  },
  lamports: {
    perTransaction: 'perTransactionLamports',
    perUserPerDay: 'perUserPerDayLamports',
    perOrganizationPerMonth: 'perOrganizationPerMonthLamports',
    // Lamports are counted in their own ranges: a sum of gas and lamports means nothing.
    suffix: '|solana',
  },
} as const satisfies Record<string, Record<string, keyof GasCaps | string>>

/**
 * Refuses a sponsored send whose cost would pass a cap (`GAS_CAP_EXCEEDED`, before anything is
 * signed), else counts it. The cost is the gas limit, and separately its wei (gas limit × the
 * highest max fee per gas it or a replacement may offer, `sponsoredMostMaxFeePerGas`), on EVM
 * chains and the fee in lamports on Solana. Runs in the activity's transaction: two sends counted at once on two instances read and
 * write the same ranges, so the database serialises them and the cap holds.
 * The organization is the parent of a sub-organization (the app). The "user" of the per-user caps
 * is the end user: a sub-organization as a whole (its root users may create users of their own,
 * each of whom would otherwise have had a budget of their own), or the caller in the parent
 * organization itself.
 */
export async function checkGasCaps(
  ctx: CapContext,
  send: {
    gas: bigint
    sendTransactionId: string
    unit?: keyof typeof UNITS
    perTransaction?: false
    /**
     * Counted whatever the caps say (never refused): what the sponsor pays anyway, a fill of the
     * nonce a user's refused send took (`evmSender`), which the user's later sends then find used.
     */
    force?: true
    /** What `gas` is, said after it in a refusal's message. */
    detail?: string
    /** The usage row's id (`capRowIdOf`, for one that is settled once the send is mined); else a new one. */
    id?: string
  },
): Promise<void> {
  const unit = UNITS[send.unit ?? 'gas']
  const organizationId = topLevelOf(ctx.organization)
  const caps = capsOf(ctx.runtime, ctx.organization)
  const perTransaction = caps[unit.perTransaction]
  const perUserPerDay = caps[unit.perUserPerDay]
  const perOrganizationPerMonth = caps[unit.perOrganizationPerMonth]
  const what = send.unit === 'lamports' ? 'lamports of fees' : send.unit === 'wei' ? 'wei' : 'gas'
  const day = `${utcDay(ctx.now)}${unit.suffix}`
  const userDay = `${organizationId}|${endUserOf(ctx)}|${day}`
  // Before sub-organizations were counted as one, their rows were keyed by the caller's user id:
  // the caller's own rows of the same day still count (see `endUserOf`).
  const earlier =
    ctx.organization.parentOrganizationId === undefined
      ? undefined
      : `${organizationId}|${ctx.caller.userId}|${day}`
  const organizationMonth = `${organizationId}|${utcMonth(ctx.now)}${unit.suffix}`
  const name = (cap: string) => (send.unit === 'wei' ? `${cap} wei` : cap)
  const refuse = (capName: string, limit: number | string, used: bigint) => {
    const cap = name(capName)
    ctx.runtime.emit('send.capExceeded', { cap })
    return new LimitError({
      code: 'GAS_CAP_EXCEEDED',
      field: 'parameters.sponsor',
      message: `this sponsored send needs ${send.gas} ${what}${send.detail ?? ''}; the ${cap} cap is ${limit}${used > 0n ? ` and ${used} is used` : ''}`,
      extra: { cap },
    })
  }
  if (
    perTransaction !== undefined &&
    send.perTransaction !== false &&
    send.force === undefined &&
    send.gas > BigInt(perTransaction)
  )
    throw refuse('per-transaction', perTransaction, 0n)
  const sum = (rows: { gas: string }[]) => rows.reduce((total, row) => total + BigInt(row.gas), 0n)
  if (perUserPerDay !== undefined && send.force === undefined) {
    const used =
      sum(await ctx.tx.findBy('gasUsage', 'userDay', userDay)) +
      (earlier === undefined ? 0n : sum(await ctx.tx.findBy('gasUsage', 'userDay', earlier)))
    if (used + send.gas > BigInt(perUserPerDay)) throw refuse('per-user daily', perUserPerDay, used)
  }
  if (perOrganizationPerMonth !== undefined && send.force === undefined) {
    const used = sum(await ctx.tx.findBy('gasUsage', 'organizationMonth', organizationMonth))
    if (used + send.gas > BigInt(perOrganizationPerMonth))
      throw refuse('per-organization monthly', perOrganizationPerMonth, used)
  }
  await ctx.tx.put('gasUsage', {
    id: send.id ?? ctx.newId(),
    userDay,
    organizationMonth,
    gas: send.gas.toString(),
    sendTransactionId: send.sendTransactionId,
    createdAt: ctx.now,
    updatedAt: ctx.now,
  })
}

/**
 * Whom the per-user daily caps count: in a sub-organization the sub-organization (one end user,
 * however many users its root users create), in the parent organization the calling user.
 * Rows counted before this rule were keyed by the caller in sub-organizations too: a caller's own
 * rows of the day still count against their sub-organization, those of its other users do not
 * (after an upgrade, for the rest of that UTC day at most).
 */
function endUserOf(ctx: CapContext): string {
  return ctx.organization.parentOrganizationId === undefined ? ctx.caller.userId : ctx.organization.id
}

/**
 * The id of the usage row a sponsored send's gas (`gas`) or wei (`wei`) is counted in when it is
 * signed: what `settleGasCaps` gives back from once it is mined.
 */
export const capRowIdOf = (sendId: string, unit: 'gas' | 'wei'): string => `${sendId}.${unit}`

/**
 * In the transaction that records a sponsored send mined (its receipt: `gasUsed`, and `paid`, the
 * wei it cost, when the node says, with `l1Paid` of it its L1 data fee and operator fee): settles
 * the caps to what it cost. It was counted at its gas limit at the most its replacements may offer
 * (so a cap never refuses one), with its L1 data fee at twice the oracle's bound and its operator
 * fee at its gas limit (`l1Counted`, both). Once mined, no other version of it can be, and the
 * caps keep what the sponsor paid:
 * - what was counted past that is given back;
 * - an L1 fee past what was counted for it (the L1's fees more than doubled while the send waited,
 *   or the chain's operator raised its operator fee) is counted on top, past the cap if it must,
 *   since the sponsor paid it. Only those fees can pass what was counted: its L2 gas was counted
 *   at the most any of its versions offers (and a replacement past that counted its raise in a row
 *   of its own, which this does not read).
 * The settlement is a usage row of its own, negative or positive, under the same day and month as
 * what it was counted in, with an id of its own (written once, however many instances settle it).
 */
export async function settleGasCaps(
  tx: Pick<Transaction, 'get' | 'put'>,
  sendId: string,
  mined: { now: number; gasUsed: bigint; paid: bigint | undefined; l1Paid: bigint; l1Counted: bigint },
): Promise<void> {
  for (const [unit, cost] of [
    ['gas', mined.gasUsed],
    ['wei', mined.paid],
  ] as const) {
    if (cost === undefined) continue
    const counted = await tx.get('gasUsage', capRowIdOf(sendId, unit))
    if (!counted) continue
    // Negative: given back. Positive: its L1 fee past what was counted, at most what it cost past
    // this row (a replacement's row may hold the rest).
    const past = cost - BigInt(counted.gas)
    const l1Past = unit === 'wei' ? mined.l1Paid - mined.l1Counted : 0n
    const settlement = past <= 0n ? past : l1Past <= 0n ? 0n : l1Past < past ? l1Past : past
    if (settlement === 0n) continue
    await tx.put('gasUsage', {
      ...counted,
      id: `${counted.id}.settled`,
      gas: settlement.toString(),
      createdAt: mined.now,
      updatedAt: mined.now,
    })
  }
}
