// A limit's spends as its usage row keeps them: one line of text, oldest first, so that a signing
// under the limit reads and rewrites a few characters at each end of it rather than a JSON array
// of objects. A busy limit holds up to `MAX_ENTRIES` spends; parsing, rewriting and storing them
// as objects was most of what a limit added to a signing (bench/README.md, issue 37).
//
// Format: entries joined by `;`, each `<at>:<amount>` or `<at>:<amount>:<ref>`, where the first
// entry's `at` is epoch milliseconds and every later one's is milliseconds after the entry before
// it; `amount` is a decimal integer; `ref` (a send's id, URI-encoded) is what a release names.
// `total` is the sum of the amounts and `count` the number of entries, kept exact with every
// change, so the window's use is known without reading the entries in the middle.
import type { SpendEntry, SpendingLimitUsageRow } from '../kernel/store/model.ts'

/** What the usage row keeps of its spends (`SpendingLimitUsageRow`'s fields). */
export interface SpendLog {
  spends: string
  /** Epoch ms of the last entry (an appended entry's `at` is written after it). */
  lastAt: number
  total: string
  count: number
}

/** The log with no entry; shared, so frozen: a function handed it returns a new log, never changes it. */
export const EMPTY_LOG: SpendLog = Object.freeze({ spends: '', lastAt: 0, total: '0', count: 0 })

const entryText = (at: number, amount: string, ref: string | undefined) =>
  ref === undefined ? `${at}:${amount}` : `${at}:${amount}:${encodeURIComponent(ref)}`

/** One entry's text, its `at` as written (absolute or a delta). */
function parseEntry(text: string): { at: number; amount: string; ref?: string } {
  const [at, amount, ref] = text.split(':') as [string, string, string | undefined]
  return ref === undefined
    ? { at: Number(at), amount }
    : { at: Number(at), amount, ref: decodeURIComponent(ref) }
}

/** The log of `entries` (oldest first). */
export function logOfEntries(entries: readonly SpendEntry[]): SpendLog {
  let previous = 0
  let total = 0n
  const texts = entries.map((entry, index) => {
    total += BigInt(entry.amount)
    const text = entryText(index === 0 ? entry.at : entry.at - previous, entry.amount, entry.ref)
    previous = entry.at
    return text
  })
  return { spends: texts.join(';'), lastAt: previous, total: total.toString(), count: entries.length }
}

/** A usage row's log: rows written before the log (an `entries` array) are read as theirs. */
export function logOf(usage: SpendingLimitUsageRow | undefined): SpendLog {
  if (!usage) return EMPTY_LOG
  if (usage.spends !== undefined)
    return {
      spends: usage.spends,
      lastAt: usage.lastAt ?? 0,
      total: usage.total ?? '0',
      count: usage.count ?? 0,
    }
  return logOfEntries(usage.entries ?? [])
}

/** Every entry of the log, oldest first, with absolute times. */
export function entriesOf(log: SpendLog): SpendEntry[] {
  if (log.count === 0) return []
  let at = 0
  return log.spends.split(';').map((text, index) => {
    const entry = parseEntry(text)
    at = index === 0 ? entry.at : at + entry.at
    return { ...entry, at }
  })
}

/**
 * The log without its entries made before `start` (they left the window). Reads only those and
 * the first one kept, whose time is rewritten as absolute.
 */
export function expire(log: SpendLog, start: number): SpendLog {
  if (log.count === 0) return log
  // Every entry left the window, the last one too.
  if (log.lastAt < start) return EMPTY_LOG
  let at = 0
  let total = BigInt(log.total)
  let from = 0
  for (let index = 0; ; index++) {
    const end = log.spends.indexOf(';', from)
    const text = end < 0 ? log.spends.slice(from) : log.spends.slice(from, end)
    const entry = parseEntry(text)
    at = index === 0 ? entry.at : at + entry.at
    if (at >= start) {
      if (index === 0) return log
      const rest = end < 0 ? '' : log.spends.slice(end)
      return {
        spends: entryText(at, entry.amount, entry.ref) + rest,
        lastAt: log.lastAt,
        total: total.toString(),
        count: log.count - index,
      }
    }
    total -= BigInt(entry.amount)
    // The last entry is at `lastAt`, which is at or after `start`: the loop ends before the text does.
    from = end + 1
  }
}

/**
 * How a log takes a new spend (`append`): past `max` entries the two oldest merge. Once the log
 * holds `joinFrom` entries (0: always), a spend in the same slice of time as the last entry (the
 * slices are `slice` ms long, counted from the epoch) is added into it, so an entry never spans
 * more than a slice. Spends of the same millisecond always share an entry.
 */
export interface AppendRule {
  max: number
  slice: number
  joinFrom: number
}

/**
 * The log with `spend` added (at or after its last entry). A spend the rule joins to the last
 * entry, neither with a reference, is added into it at the later time: the entry's earlier spends
 * free with the later one (less than a slice later, never earlier), and the total stays exact.
 * Past `max` entries, the two oldest merge into one at the later time, the same way.
 */
export function append(log: SpendLog, spend: SpendEntry, rule: AppendRule): SpendLog {
  const total = (BigInt(log.total) + BigInt(spend.amount)).toString()
  if (log.count === 0)
    return { spends: entryText(spend.at, spend.amount, spend.ref), lastAt: spend.at, total, count: 1 }
  const at = Math.max(spend.at, log.lastAt)
  const cut = log.spends.lastIndexOf(';') + 1
  const last = parseEntry(log.spends.slice(cut))
  const joins =
    at === log.lastAt ||
    (log.count >= rule.joinFrom && Math.floor(at / rule.slice) === Math.floor(log.lastAt / rule.slice))
  if (joins && last.ref === undefined && spend.ref === undefined) {
    const amount = (BigInt(last.amount) + BigInt(spend.amount)).toString()
    // The entry's time is written as a delta from the one before it (or absolute, if first).
    const text = entryText(last.at + (at - log.lastAt), amount, undefined)
    return { ...log, spends: log.spends.slice(0, cut) + text, lastAt: at, total }
  }
  let next: SpendLog = {
    spends: `${log.spends};${entryText(at - log.lastAt, spend.amount, spend.ref)}`,
    lastAt: at,
    total,
    count: log.count + 1,
  }
  while (next.count > rule.max) next = mergeOldest(next)
  return next
}

/** The log with its two oldest entries merged into one at the second's time, without a reference. */
function mergeOldest(log: SpendLog): SpendLog {
  const first = log.spends.indexOf(';')
  const second = log.spends.indexOf(';', first + 1)
  const a = parseEntry(log.spends.slice(0, first))
  const b = parseEntry(second < 0 ? log.spends.slice(first + 1) : log.spends.slice(first + 1, second))
  const merged = entryText(a.at + b.at, (BigInt(a.amount) + BigInt(b.amount)).toString(), undefined)
  return { ...log, spends: merged + (second < 0 ? '' : log.spends.slice(second)), count: log.count - 1 }
}

/** The log's entries, when one may name `ref` (none is read otherwise); undefined when none can. */
const entriesNaming = (log: SpendLog, ref: string): SpendEntry[] | undefined =>
  log.spends.includes(`:${encodeURIComponent(ref)}`) ? entriesOf(log) : undefined

/**
 * The log with the entry `ref` names settled by `by`: lowered by it, never below 0 (a mined send's
 * fee, reserved at its most), or raised by its opposite when negative (a mined send whose L1 data
 * fee passed what was reserved for it); undefined when none names it or `by` is 0. The entry keeps
 * its time, so it frees as before.
 */
export function withRefSettled(log: SpendLog, ref: string, by: bigint): SpendLog | undefined {
  const entries = by !== 0n ? entriesNaming(log, ref) : undefined
  if (!entries) return undefined
  const index = entries.findIndex((entry) => entry.ref === ref)
  if (index < 0) return undefined
  const entry = entries[index]!
  const amount = BigInt(entry.amount)
  entries[index] = { ...entry, amount: (amount > by ? amount - by : 0n).toString() }
  return logOfEntries(entries)
}

/** The log without the entries `ref` names (a release), or undefined when none does. */
export function withoutRef(log: SpendLog, ref: string): SpendLog | undefined {
  const entries = entriesNaming(log, ref)
  if (!entries) return undefined
  const kept = entries.filter((entry) => entry.ref !== ref)
  return kept.length === entries.length ? undefined : logOfEntries(kept)
}
