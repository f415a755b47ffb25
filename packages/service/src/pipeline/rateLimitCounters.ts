import type { BucketCharge, Store } from '../kernel/store/Store.ts'

/**
 * One budget a request is charged to: a generic cell rate (GCRA, a token bucket kept as one
 * number): each request moves the bucket's theoretical arrival time `tat` one interval on; a
 * request is let in while `tat` is no further ahead of now than the tolerance (`burst - 1`
 * intervals), and a refused request is not charged.
 */
export type Charge = BucketCharge

/** Per charge, in the order given: let in, or how long until it would be. */
export type ChargeResult = { allowed: true } | { allowed: false; retryAfterMs: number }

/** Keeps the buckets: in this process, or in the database for every instance on it. */
export interface RateLimitCounters {
  /** Charges one request to every budget that has room; one answer per charge. */
  charge(charges: readonly Charge[], now: number): Promise<ChargeResult[]>
}

/** Buckets idle this long are dropped (their `tat` is past; a new one starts the same). */
const IDLE_MS = 60_000
/** A process sweeps its idle buckets once it keeps more than this many… */
const MEMORY_BUCKETS = 10_000
/** …and at most once per this long, so a flood of live keys does not make every charge a scan. */
const SWEEP_INTERVAL_MS = 1_000

export interface MemoryCountersOptions {
  /**
   * The most buckets a process keeps (default 100,000, some 10 MB). Past it, the buckets used
   * least recently are dropped first: a flood of fresh keys (addresses, e-mails) cannot grow the
   * map without end, and what it costs is that a dropped key starts again with a full bucket.
   */
  maxBuckets?: number
}

/**
 * The buckets in this process's memory: exact where this process is the database's only writer
 * (SQLite, the in-memory store), since every request of the deployment passes through it. The
 * map is kept in order of last use (a key charged or refused moves to the end), so its head is
 * what to drop first: a key being hammered is never the one dropped.
 */
export function memoryCounters(options: MemoryCountersOptions = {}): RateLimitCounters {
  const maxBuckets = options.maxBuckets ?? 100_000
  const tats = new Map<string, number>()
  let sweptAt = Number.NEGATIVE_INFINITY
  const sweep = (now: number) => {
    if (tats.size > MEMORY_BUCKETS && now - sweptAt >= SWEEP_INTERVAL_MS) {
      sweptAt = now
      for (const [key, tat] of tats) if (tat < now - IDLE_MS) tats.delete(key)
    }
    for (const key of tats.keys()) {
      if (tats.size <= maxBuckets) break
      tats.delete(key)
    }
  }
  return {
    async charge(charges, now) {
      const results: ChargeResult[] = charges.map(({ key, intervalMs, toleranceMs }) => {
        const tat = tats.get(key) ?? now
        tats.delete(key)
        if (tat - now > toleranceMs) {
          tats.set(key, tat)
          return { allowed: false, retryAfterMs: tat - now - toleranceMs }
        }
        tats.set(key, Math.max(tat, now) + intervalMs)
        return { allowed: true }
      })
      sweep(now)
      return results
    },
  }
}

/** A database's buckets are swept of idle rows about once per this many charges. */
const SWEEP_EVERY = 1000

/**
 * The buckets in the database (table `rateLimitBuckets`), shared by every instance on it: each
 * request is one statement, an upsert of its buckets that decides and charges atomically, in
 * autocommit (no transaction around it): `store.chargeBuckets`, written by the store's backend.
 */
export function databaseCounters(store: Store): RateLimitCounters {
  let charged = 0
  return {
    async charge(charges, now) {
      if (++charged % SWEEP_EVERY === 0)
        // Best effort: a failed sweep leaves idle rows for the next one.
        void store.sweepBuckets(now - IDLE_MS).catch(() => {})
      const rows = await store.chargeBuckets(charges, now)
      const byKey = new Map(rows.map((row) => [row.key, row]))
      return charges.map(({ key, toleranceMs }) => {
        const row = byKey.get(key)
        if (!row || row.allowed) return { allowed: true }
        return { allowed: false, retryAfterMs: row.tat - now - toleranceMs }
      })
    },
  }
}
