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
/** A process keeps at most this many buckets before it drops the idle ones. */
const MEMORY_BUCKETS = 10_000

/**
 * The buckets in this process's memory: exact where this process is the database's only writer
 * (SQLite, the in-memory store), since every request of the deployment passes through it.
 */
export function memoryCounters(): RateLimitCounters {
  const tats = new Map<string, number>()
  return {
    async charge(charges, now) {
      if (tats.size > MEMORY_BUCKETS) for (const [key, tat] of tats) if (tat < now - IDLE_MS) tats.delete(key)
      return charges.map(({ key, intervalMs, toleranceMs }) => {
        const tat = tats.get(key) ?? now
        if (tat - now > toleranceMs) return { allowed: false, retryAfterMs: tat - now - toleranceMs }
        tats.set(key, Math.max(tat, now) + intervalMs)
        return { allowed: true }
      })
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
