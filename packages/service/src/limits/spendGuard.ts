// The spend guard the limits wing registers (kernel/spending.ts): in the signing handler's own
// transaction it reads every limit covering the signature, its usage row, and either refuses or
// writes the usage row with the new spend. Every writer of an organization's limits and usage rows
// holds its spend lock (`spendLockOf`) while it reads and writes them: SQLite runs transactions one
// after the other anyway; on PostgreSQL the pipeline takes the lock before the transaction begins,
// so the guard reads what the last holder committed (see docs/spending-limits.md, "What is exact").
import type { SpendingLimitExceededDetails, SpendingLimitPeriod } from '@latchkey/protocol'
import { keepAppEventOnFailure } from '../kernel/appEvents.ts'
import { LimitError } from '../kernel/base/errors.ts'
import { orderSpends, type SpendContext, type SpendGuard, type SpendRequest } from '../kernel/spending.ts'
import type { SpendEntry, SpendingLimitRow, SpendingLimitUsageRow } from '../kernel/store/model.ts'
import type { Transaction } from '../kernel/store/Transaction.ts'
import { type SignerKey, signerKeyOf } from './signerKey.ts'
import {
  type AppendRule,
  append,
  entriesOf,
  expire,
  logOf,
  type SpendLog,
  withoutRef,
  withRefSettled,
} from './spendLog.ts'
import { normalAddress, spendOf } from './spendOf.ts'

export const PERIOD_MS: Record<SpendingLimitPeriod, number> = {
  PERIOD_HOUR: 3_600_000,
  PERIOD_DAY: 86_400_000,
  PERIOD_WEEK: 7 * 86_400_000,
  PERIOD_30_DAYS: 30 * 86_400_000,
}

/**
 * Most entries a usage row keeps: past it, the two oldest merge into one at the later time, so a
 * merged spend frees later than it would have (never earlier) and the total stays exact.
 */
export const MAX_ENTRIES = 256

/**
 * Entries a rolling window's row keeps to the millisecond. Past them, a spend in the same
 * 1/`SLICES` of the period as the last entry (the same second, for a day; 42 ms, for an hour)
 * joins it: a busy limit's row stays small, and what it held frees less than a slice later.
 */
export const EXACT_ENTRIES = 32
export const SLICES = 86_400

/**
 * How `limit`'s row takes a spend. A fixed window frees every spend at its end, so all of a
 * window's spends share one entry (unless a send's reference names one) and nothing frees later.
 */
export function appendRule(limit: SpendingLimitRow): AppendRule {
  if (limit.window.type !== 'SPENDING_LIMIT_WINDOW_ROLLING')
    return { max: MAX_ENTRIES, slice: Number.POSITIVE_INFINITY, joinFrom: 0 }
  return {
    max: MAX_ENTRIES,
    slice: PERIOD_MS[limit.window.period] / SLICES,
    joinFrom: EXACT_ENTRIES,
  }
}

/** The window `now` falls in: spends at or after `start` count; `end` (fixed windows) is when it resets. */
export function windowAt(limit: SpendingLimitRow, now: number): { start: number; end?: number } {
  const period = PERIOD_MS[limit.window.period]
  if (limit.window.type === 'SPENDING_LIMIT_WINDOW_ROLLING') return { start: now - period + 1 }
  const origin = Number(limit.window.startTimestampMs)
  // Windows tile time both ways from the origin: before a start in the future, `now` is in the
  // window that ends at it (not in the first one, which would drop every spend as it is counted).
  const index = Math.floor((now - origin) / period)
  return { start: origin + index * period, end: origin + (index + 1) * period }
}

/**
 * What a limit's window holds at `now`: its log without the spends that left the window, their
 * sum, and (read only when asked: a refusal, the list) the live entries.
 */
export function usageAt(limit: SpendingLimitRow, usage: SpendingLimitUsageRow | undefined, now: number) {
  const window = windowAt(limit, now)
  const log = expire(logOf(usage), window.start)
  let entries: SpendEntry[] | undefined
  return {
    window,
    log,
    used: BigInt(log.total),
    get entries(): SpendEntry[] {
      entries ??= entriesOf(log)
      return entries
    },
  }
}

/**
 * When enough of `entries` frees for `amount` to fit under `cap` (epoch ms): the end of a fixed
 * window; for a rolling one, when the oldest spends that must leave have left. Undefined: never
 * (the amount alone is over the cap).
 */
export function freesAt(
  limit: SpendingLimitRow,
  state: ReturnType<typeof usageAt>,
  amount: bigint,
): number | undefined {
  const cap = BigInt(limit.amount)
  if (amount > cap) return undefined
  if (state.window.end !== undefined) return state.window.end
  const period = PERIOD_MS[limit.window.period]
  let over = state.used + amount - cap
  for (const entry of state.entries) {
    over -= BigInt(entry.amount)
    if (over <= 0n) return entry.at + period
  }
  return undefined
}

/**
 * Whether `limit` counts what `signer` signs for `caller`. A wallet account's limit covers its key,
 * under whichever address format the signature names it (another account of the same `curve|path`,
 * a private key's other address): they all sign the same transactions.
 */
function covers(limit: SpendingLimitRow, signer: SignerKey, caller: SpendContext['caller']): boolean {
  const { scope } = limit
  if (scope.type === 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT')
    return signer.answersTo(normalAddress(scope.address))
  if (scope.type === 'SPENDING_LIMIT_SCOPE_USER') return scope.userId === caller.userId
  if (scope.type === 'SPENDING_LIMIT_SCOPE_SESSION_PROFILE')
    return caller.credential.sessionProfileId === scope.sessionProfileId
  return caller.credential.kind === 'API_KEY' && scope.apiKeyId === caller.credential.id
}

/**
 * The organization's usage rows by limit id, read by organization (one lookup, which the
 * transaction of an ordered signing has read ahead with its others: `serializedLookups`).
 */
async function usagesOf(
  tx: Transaction,
  organizationId: string,
): Promise<Map<string, SpendingLimitUsageRow>> {
  const usages = await tx.findBy('spendingLimitUsage', 'organizationId', organizationId)
  return new Map(usages.map((usage) => [usage.id, usage]))
}

function refusal(
  limit: SpendingLimitRow,
  state: ReturnType<typeof usageAt>,
  spend: { amount: bigint; fee: bigint },
  now: number,
) {
  const { amount, fee } = spend
  const cap = BigInt(limit.amount)
  const remaining = cap > state.used ? cap - state.used : 0n
  const frees = freesAt(limit, state, amount)
  const unit =
    limit.asset.type === 'SPENDING_LIMIT_ASSET_NATIVE'
      ? `${limit.asset.caip2} native units`
      : `units of ${limit.asset.type === 'SPENDING_LIMIT_ASSET_ERC20' ? limit.asset.contract : limit.asset.mint}`
  return new LimitError({
    code: 'SPENDING_LIMIT_EXCEEDED',
    message:
      `spending limit ${limit.id} (${limit.name}) allows ${limit.amount} ${unit} per window: ${state.used} used, ${remaining} remaining, this signature spends ${amount}` +
      (fee > 0n ? ` (of which up to ${fee} is the network's fee)` : '') +
      (frees === undefined
        ? '; it is more than the whole limit'
        : `; enough frees at ${new Date(frees).toISOString()}`),
    extra: {
      ...({
        spendingLimitId: limit.id,
        limit: limit.amount,
        used: state.used.toString(),
        remaining: remaining.toString(),
        requested: amount.toString(),
        ...(frees === undefined ? {} : { freesAtTimestampMs: String(frees) }),
      } satisfies SpendingLimitExceededDetails),
      ...(frees === undefined ? {} : { retryAfterSeconds: Math.max(1, Math.ceil((frees - now) / 1000)) }),
    },
  })
}

/**
 * The refusal, carrying its app event: the activity fails and its writes are rolled back, but the
 * event is recorded in its transaction after the rollback (kernel/appEvents.ts), so it exists
 * exactly when the FAILED activity does; a replay runs no handler and records nothing.
 */
function refused(ctx: SpendContext, error: LimitError): LimitError {
  if (!ctx.activity) return error
  const extra = error.extra as { spendingLimitId: string; limit: string; used: string; requested: string }
  return keepAppEventOnFailure(error, {
    id: `${ctx.activity.id}.limit_refused`,
    organization: ctx.activity.organization,
    type: 'LATCHKEY_SPENDING_LIMIT_REFUSED',
    data: {
      activityId: ctx.activity.id,
      activityType: ctx.activity.type,
      userId: ctx.caller.userId,
      spendingLimitId: extra.spendingLimitId,
      limit: extra.limit,
      used: extra.used,
      requested: extra.requested,
    },
  })
}

/**
 * The spend guard, with `valueOnlyChains`: the EVM chains the operator adds to the service's own list
 * of chains whose native coin moves only as a call's value (`valueOnlyChains.ts`, `[limits]`).
 */
export function createSpendGuard({
  valueOnlyChains = [],
}: {
  valueOnlyChains?: readonly string[]
} = {}): SpendGuard {
  const valueOnly: ReadonlySet<string> = new Set(valueOnlyChains)
  return {
    async reserve(ctx: SpendContext, request: SpendRequest): Promise<void> {
      const signer = signerKeyOf(request)
      const limits = (await ctx.tx.findBy('spendingLimits', 'organizationId', ctx.organizationId)).filter(
        (limit) => covers(limit, signer, ctx.caller),
      )
      // Every limit is checked before any is written: a refusal by the second leaves the first as it was.
      const writes: { limit: SpendingLimitRow; usage: SpendingLimitUsageRow | undefined; log: SpendLog }[] =
        []
      if (limits.length === 0) return
      // Held already where the pipeline ordered the transaction (a snapshot run is run again as one).
      await orderSpends(ctx.tx, ctx.organizationId)
      const spend = request.describe()
      let usages: Map<string, SpendingLimitUsageRow> | undefined
      for (const limit of limits) {
        const { total: amount, fee } = spendOf(
          limit,
          spend,
          spend.kind === 'evm' ? signer.evm : spend.kind === 'solana' ? signer.solana : undefined,
          valueOnly,
        )
        if (amount === 0n) continue
        usages ??= await usagesOf(ctx.tx, ctx.organizationId)
        const usage = usages.get(limit.id)
        const state = usageAt(limit, usage, ctx.now)
        if (state.used + amount > BigInt(limit.amount))
          throw refused(ctx, refusal(limit, state, { amount, fee }, ctx.now))
        const entry = {
          at: ctx.now,
          amount: amount.toString(),
          ...(request.reference === undefined ? {} : { ref: request.reference }),
        }
        writes.push({ limit, usage, log: append(state.log, entry, appendRule(limit)) })
      }
      for (const { limit, usage, log } of writes)
        await ctx.tx.put('spendingLimitUsage', {
          id: limit.id,
          organizationId: limit.organizationId,
          ...log,
          createdAt: usage?.createdAt ?? ctx.now,
          updatedAt: ctx.now,
        })
    },

    async release(ctx, reference: string): Promise<void> {
      await orderSpends(ctx.tx, ctx.organizationId)
      const usages = await ctx.tx.findBy('spendingLimitUsage', 'organizationId', ctx.organizationId)
      for (const usage of usages) {
        const log = withoutRef(logOf(usage), reference)
        if (log) await rewrite(ctx, usage, log)
      }
    },

    async settle(ctx, reference, { caip2, by }): Promise<void> {
      await orderSpends(ctx.tx, ctx.organizationId)
      // The limits that counted the fee: the native ones of its chain (limits/spendOf.ts).
      const counted = new Set(
        (await ctx.tx.findBy('spendingLimits', 'organizationId', ctx.organizationId))
          .filter(
            (limit) => limit.asset.type === 'SPENDING_LIMIT_ASSET_NATIVE' && limit.asset.caip2 === caip2,
          )
          .map((limit) => limit.id),
      )
      if (counted.size === 0) return
      for (const usage of await ctx.tx.findBy('spendingLimitUsage', 'organizationId', ctx.organizationId)) {
        if (!counted.has(usage.id)) continue
        const log = withRefSettled(logOf(usage), reference, by)
        if (log) await rewrite(ctx, usage, log)
      }
    },
  }
}

/** Writes `usage` back with `log` (a release or a settlement), as a log even if it was an entries array. */
async function rewrite(
  ctx: { tx: Transaction; now: number },
  usage: SpendingLimitUsageRow,
  log: SpendLog,
): Promise<void> {
  const { entries: _, ...row } = usage
  await ctx.tx.put('spendingLimitUsage', { ...row, ...log, updatedAt: ctx.now })
}
