import type { SpendingLimit, SpendingLimitAsset, SpendingLimitPeriod } from '@latchkey/protocol'
import type { AgentToken } from '../../core/actions/activities/grantAgentAllowance.ts'
import type { enLimits } from '../i18n/en/limits.ts'
import type { enSpending } from '../i18n/en/spending.ts'
import type { Translate } from '../i18n/strings.ts'

/** The strings of limits in words (`spending` section), which <SendTransaction/> shows too. */
type SpendingKey = keyof typeof enSpending

import { formatEth } from '../send/formatEth.ts'

// Shared by <SendTransaction/> and <AgentAllowance/>: limits, amounts and times in words.

const PERIOD_ADJECTIVE: Record<SpendingLimitPeriod, SpendingKey> = {
  PERIOD_HOUR: 'limitHourly',
  PERIOD_DAY: 'limitDaily',
  PERIOD_WEEK: 'limitWeekly',
  PERIOD_30_DAYS: 'limit30Day',
}

const LEFT_IN: Record<SpendingLimitPeriod, SpendingKey> = {
  PERIOD_HOUR: 'limitLeftHour',
  PERIOD_DAY: 'limitLeftDay',
  PERIOD_WEEK: 'limitLeftWeek',
  PERIOD_30_DAYS: 'limitLeft30Days',
}

export const PERIODS = Object.keys(PERIOD_ADJECTIVE) as SpendingLimitPeriod[]

/** `Hour`, `Day`…: a period as a form's choice. */
export const PERIOD_LABEL: Record<SpendingLimitPeriod, keyof typeof enLimits> = {
  PERIOD_HOUR: 'periodHour',
  PERIOD_DAY: 'periodDay',
  PERIOD_WEEK: 'periodWeek',
  PERIOD_30_DAYS: 'period30Days',
}

/** Why `readAmount` refused what was typed. */
export type AmountProblem =
  /** Not an amount above zero, or more decimals than the unit has. */
  | 'invalid'
  /** More than the chain can hold (2^256 − 1 smallest units). */
  | 'large'
  /**
   * One thousands separator of the locale's before three digits (`1,000` in English, `1.000` in
   * Spanish): a thousand to some, one to others, who write that separator as their decimal mark.
   */
  | 'ambiguous'

/**
 * `0.01` in a unit of `decimals` places → its smallest units (`0.01` ETH → wei, `25` USDC with 6 →
 * 25000000), read as a user of `locale` types it:
 * - a point or a comma as the decimal mark, and Arabic-Indic or Persian digits;
 * - the locale's thousands separator where it can be nothing else: twice or more (`1,000,000`), or
 *   before the decimal mark (`1,000.5`), and the Arabic one (`١٬٠٠٠`) always.
 *
 * A single thousands separator before three digits (`1,000`) is refused as `ambiguous`, never
 * guessed at: read one way, a cap is a thousand times what its user meant.
 */
export function readAmount(
  text: string,
  decimals = 18,
  locale = 'en',
): { units: bigint } | { problem: AmountProblem } {
  let typed = westernDigits(text.trim())
  const { group } = marksOf(locale)
  const ascii = group === ',' || group === '.'
  // Arabic's separator, and a space or an apostrophe (French, Swiss), are never a decimal mark.
  // One kind of separator throughout (`\1`): `1,000٬000` is no amount.
  const separator = `\u066c|${ascii ? `\\${group}` : "[\\s'’]"}`
  const grouped = new RegExp(
    `^[1-9]\\d{0,2}(${separator})\\d{3}(?:\\1\\d{3})*(${ascii ? (group === ',' ? '\\.' : ',') : '[.,]'}\\d+)?$`,
  ).exec(typed)
  if (grouped) {
    if (grouped[1] === group && !grouped[2] && typed.split(group).length === 2)
      return { problem: 'ambiguous' }
    typed = typed.split(grouped[1] as string).join('')
  }
  const match = /^(\d+)(?:[.,](\d+))?$/.exec(typed)
  if (!match || (match[2] ?? '').length > decimals) return { problem: 'invalid' }
  const units =
    BigInt(match[1] as string) * 10n ** BigInt(decimals) +
    BigInt((match[2] ?? '').padEnd(decimals, '0') || '0')
  if (units === 0n) return { problem: 'invalid' }
  return units < 2n ** 256n ? { units } : { problem: 'large' }
}

/** What `readAmount` reads, or undefined when it refuses it. */
export function unitsOf(text: string, decimals = 18, locale = 'en'): bigint | undefined {
  const read = readAmount(text, decimals, locale)
  return 'units' in read ? read.units : undefined
}

/**
 * What a form says of an amount `readAmount` refused as too large or ambiguous: the message's key
 * in the limits' strings and its values (`“1,000” could be 1000 or 1.000…`).
 */
export function amountRefusal(
  text: string,
  problem: Exclude<AmountProblem, 'invalid'>,
  locale: string,
): { key: 'amountTooLarge' | 'amountAmbiguous'; values?: Record<string, string> } {
  if (problem === 'large') return { key: 'amountTooLarge' }
  const typed = text.trim()
  const { group, decimal } = marksOf(locale)
  const [head, tail] = westernDigits(typed).split(group) as [string, string]
  return { key: 'amountAmbiguous', values: { typed, whole: head + tail, point: `${head}${decimal}${tail}` } }
}

/** A message of the limits' strings, as a form shows it under a field. */
export type FieldError = { key: keyof typeof enLimits; values?: Record<string, string | number> }

/**
 * An amount field's `text` read for a form (`readAmount`): its units, or the error the field
 * shows: `invalid`'s message (with `decimals`) for no amount at all, else why it was refused.
 */
export function checkAmount(
  text: string,
  decimals: number,
  locale: string,
  invalid: 'agentTokenAmountInvalid' | 'agentAmountInvalid',
): { units: bigint } | { error: FieldError } {
  const read = readAmount(text, decimals, locale)
  if ('units' in read) return read
  return {
    error:
      read.problem === 'invalid'
        ? { key: invalid, values: { decimals } }
        : amountRefusal(text, read.problem, locale),
  }
}

/**
 * `value` smallest units as a field shows it for `locale` to read back (`readAmount`), with the
 * locale's decimal mark (`1,234` in Spanish, not `1.234`, which `readAmount` refuses there as a
 * thousand or one).
 */
export const typedUnits = (value: bigint, decimals: number, locale: string): string =>
  withDecimalMark(formatUnits(value, decimals), locale)

/**
 * A number written with a point (`1.234`) in `locale`'s decimal mark: `1,234` in Spanish, where
 * `1.234` reads as a thousand two hundred and thirty-four.
 */
export function withDecimalMark(number: string, locale: string): string {
  return marksOf(locale).decimal === ',' ? number.replace('.', ',') : number
}

/**
 * The locale's thousands separator and decimal mark, as it writes Latin digits (`,` and `.` in
 * English, `.` and `,` in Spanish).
 */
function marksOf(locale: string): { group: string; decimal: string } {
  const parts = new Intl.NumberFormat(locale, { numberingSystem: 'latn' }).formatToParts(1_000_000.5)
  const mark = (type: string, fallback: string) => parts.find((part) => part.type === type)?.value ?? fallback
  return { group: mark('group', ','), decimal: mark('decimal', '.') }
}

/**
 * Arabic-Indic (٠-٩) and Persian (۰-۹) digits as ASCII, and the Arabic decimal separator (٫) as a
 * point: what an Arabic or Persian keyboard types into a decimal field (`inputMode="decimal"`).
 * Full-width digits, point and comma (０-９, ．, ，) too: what a Chinese or Japanese input method
 * types unless switched to half-width. Nothing else is folded (not `²` or `①`: NFKC would read
 * `1²` as 12).
 */
function westernDigits(text: string): string {
  return text.replace(/[\u0660-\u0669\u06f0-\u06f9\u066b\uff10-\uff19\uff0c\uff0e]/g, (c) => {
    const code = c.charCodeAt(0)
    if (code === 0x066b || code === 0xff0e) return '.'
    if (code === 0xff0c) return ','
    if (code >= 0xff10) return String(code - 0xff10)
    return String(code >= 0x06f0 ? code - 0x06f0 : code - 0x0660)
  })
}

/** `hourly`, `daily`…: the adjective of a limit's period (`spending` when the limit is unknown). */
export const periodAdjective = (t: Translate<SpendingKey>, period: SpendingLimitPeriod | undefined) =>
  t(period ? PERIOD_ADJECTIVE[period] : 'limitAny')

/** The chain's native unit: its symbol, decimals and the address format of its accounts. */
export function nativeOf(caip2: string) {
  return caip2.startsWith('solana:')
    ? ({ symbol: 'SOL', decimals: 9, addressFormat: 'ADDRESS_FORMAT_SOLANA' } as const)
    : ({ symbol: 'ETH', decimals: 18, addressFormat: 'ADDRESS_FORMAT_ETHEREUM' } as const)
}

/** `value` smallest units as a decimal of `decimals` places, every significant digit kept: `1500000`, 6 → `1.5`. */
export function formatUnits(value: bigint, decimals: number): string {
  const scale = 10n ** BigInt(decimals)
  const fraction = (value % scale).toString().padStart(decimals, '0').replace(/0+$/, '')
  return `${value / scale}${fraction ? `.${fraction}` : ''}`
}

/**
 * An amount of a limit's asset with its unit: `0.004 ETH`, `1.5 SOL`, `25 USDC` (an ERC-20 or SPL
 * token whose `token` is known), `250 units` (one whose is not), with `locale`'s decimal mark
 * (`0,004 ETH` in Spanish). Its spaces are no-break spaces, so
 * a narrow line never puts the number on one line and its unit on the next (in a right-to-left
 * sentence the two then read in the wrong places); `limitName` writes them back as spaces.
 */
export function formatAmount(
  t: Translate<SpendingKey>,
  locale: string,
  asset: SpendingLimitAsset | undefined,
  amount: string,
  token?: AgentToken | undefined,
): string {
  const value = /^\d+$/.test(amount) ? BigInt(amount) : 0n
  const number = (text: string) => withDecimalMark(text, locale)
  const text =
    (asset?.type === 'SPENDING_LIMIT_ASSET_ERC20' || asset?.type === 'SPENDING_LIMIT_ASSET_SPL') && token
      ? t('limitToken', { amount: number(formatUnits(value, token.decimals)), symbol: token.symbol })
      : asset?.type === 'SPENDING_LIMIT_ASSET_NATIVE' && asset.caip2.startsWith('eip155:')
        ? t('sendEth', { amount: number(formatEth(value)) })
        : asset?.type === 'SPENDING_LIMIT_ASSET_NATIVE' && asset.caip2.startsWith('solana:')
          ? t('limitSol', { amount: number(formatUnits(value, nativeOf(asset.caip2).decimals)) })
          : t('limitUnits', { amount: value.toString() })
  return text.replace(/ /g, '\u00a0')
}

/**
 * A limit's name as a row shows it: a space after a digit is a no-break one, as in `formatAmount`,
 * so "Daily limit of 1000000 ETH" (kept with spaces, see `limitName`) never breaks before its unit.
 */
export const nameOnScreen = (name: string): string => name.replace(/(\d) (?=\S)/g, '$1\u00a0')

/** `in 3 hours`, `in 12 minutes`: how long until `epochMs`, in the locale's words. */
export function formatIn(epochMs: number, now: number, locale: string): string {
  const ms = Math.max(0, epochMs - now)
  const rtf = new Intl.RelativeTimeFormat(locale, { style: 'long', numeric: 'always' })
  if (ms < 3_600_000) return rtf.format(Math.max(1, Math.ceil(ms / 60_000)), 'minute')
  if (ms < 48 * 3_600_000) return rtf.format(Math.ceil(ms / 3_600_000), 'hour')
  return rtf.format(Math.ceil(ms / 86_400_000), 'day')
}

/** `14:00` later today, else the date and time (`Dec 3, 2026, 9:41 AM`). */
export function formatAt(epochMs: number, now: number, locale: string): string {
  // The clock time alone only for today: a daily spend frees at this time tomorrow, which a bare
  // "9:41" would read as a moment ago.
  const today = new Date(epochMs).toDateString() === new Date(now).toDateString()
  return new Intl.DateTimeFormat(
    locale,
    today ? { timeStyle: 'short' } : { dateStyle: 'medium', timeStyle: 'short' },
  ).format(epochMs)
}

/** `0.004 ETH left today`, `25 USDC left today`. */
export function leftText(
  t: Translate<SpendingKey>,
  locale: string,
  limit: SpendingLimit,
  token?: AgentToken | undefined,
): string {
  return t(LEFT_IN[limit.window.period], {
    amount: formatAmount(t, locale, limit.asset, limit.remaining, token),
  })
}

/** `frees at 14:00`, or nothing when nothing is used. */
export function freesText(
  t: Translate<SpendingKey>,
  limit: SpendingLimit,
  now: number,
  locale: string,
): string | undefined {
  if (!limit.nextReleaseTimestampMs || limit.used === '0') return undefined
  return t('limitFreesAt', { time: formatAt(Number(limit.nextReleaseTimestampMs), now, locale) })
}

/** The refusal's numbers, as `SpendingLimitExceededError` carries them. */
export interface Refusal {
  spendingLimitId: string
  limit: string
  used: string
  remaining: string
  /** What the refused signature would have spent of the limit's asset, its fee included. */
  requested?: string | undefined
  freesAtTimestampMs: number | undefined
}

/**
 * A limit's refusal in words: "This would exceed your daily limit of 0.01 ETH: 0.008 ETH used,
 * 0.002 ETH left, frees in 3 hours." `limits` (when readable) gives the period and the asset.
 * With `sending` (the wei a send moves) and a refusal that asked for more, the network fee a
 * native limit counts is the difference, and the sentence says what the send needed with it.
 */
export function refusalText(options: {
  t: Translate<SpendingKey>
  refusal: Refusal
  limits: readonly SpendingLimit[] | undefined
  now: number
  locale: string
  sending?: bigint | undefined
}): string {
  const { t, refusal, now, locale } = options
  const limit = options.limits?.find((entry) => entry.spendingLimitId === refusal.spendingLimitId)
  const amount = (value: string) => formatAmount(t, locale, limit?.asset, value)
  const values = {
    period: periodAdjective(t, limit?.window.period),
    limit: amount(refusal.limit),
    used: amount(refusal.used),
    remaining: amount(refusal.remaining),
  }
  if (refusal.freesAtTimestampMs === undefined) return t('limitExceededWhole', values)
  const when = formatIn(refusal.freesAtTimestampMs, now, locale)
  const withFee =
    options.sending !== undefined &&
    refusal.requested !== undefined &&
    limit?.asset.type === 'SPENDING_LIMIT_ASSET_NATIVE' &&
    BigInt(refusal.requested) > options.sending
  if (withFee) return t('limitExceededWithFee', { ...values, requested: amount(refusal.requested!), when })
  return t('limitExceeded', { ...values, when })
}

/** Whether `limit` counts what `address` signs for `userId` on `caip2`'s native unit. */
export function coversNative(
  limit: SpendingLimit,
  target: { address: string | undefined; userId: string | undefined; caip2: string },
): boolean {
  if (limit.asset.type !== 'SPENDING_LIMIT_ASSET_NATIVE' || limit.asset.caip2 !== target.caip2) return false
  const { scope } = limit
  if (scope.type === 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT')
    return target.address !== undefined && scope.address.toLowerCase() === target.address.toLowerCase()
  return scope.type === 'SPENDING_LIMIT_SCOPE_USER' && scope.userId === target.userId
}

/** The covering limit with the least left: the one that decides. */
export function tightest(limits: readonly SpendingLimit[]): SpendingLimit | undefined {
  let best: SpendingLimit | undefined
  for (const limit of limits) if (!best || BigInt(limit.remaining) < BigInt(best.remaining)) best = limit
  return best
}
