import { type RawBuilder, sql } from 'kysely'
import type { BucketCharge, BucketState } from './StoreBackend.ts'

/** How a database writes the two things its bucket upsert differs in. */
interface BucketDialect {
  /** A number parameter, typed as the columns' floating point. */
  number(value: number): RawBuilder<number>
  /** The greater of two numbers. */
  greater(a: RawBuilder<number>, b: RawBuilder<number>): RawBuilder<number>
}

/**
 * The rate-limit bucket statements (`StoreBackend.chargeBuckets`, `sweepBuckets`) in a database's
 * syntax: one upsert of every charged bucket that decides and charges atomically (GCRA).
 */
export function bucketStatements({ number, greater }: BucketDialect) {
  return {
    chargeBuckets(charges: readonly BucketCharge[], now: number): RawBuilder<BucketState> {
      const rows = sql.join(
        charges.map(
          (c) =>
            sql`(${c.key}, ${number(now + c.intervalMs)}, ${number(c.intervalMs)}, ${number(c.toleranceMs)}, true)`,
        ),
      )
      // The inserted `tat` is now + interval, so now = excluded.tat - excluded.intervalMs.
      const admits = sql<boolean>`b."tat" <= excluded."tat" - excluded."intervalMs" + excluded."toleranceMs"`
      const moved = greater(sql`b."tat" + excluded."intervalMs"`, sql`excluded."tat"`)
      return sql<BucketState>`
        insert into "rateLimitBuckets" as b ("key", "tat", "intervalMs", "toleranceMs", "allowed")
        values ${rows}
        on conflict ("key") do update set
          "tat" = case when ${admits} then ${moved} else b."tat" end,
          "allowed" = ${admits},
          "intervalMs" = excluded."intervalMs",
          "toleranceMs" = excluded."toleranceMs"
        returning "key", "tat", "allowed"`
    },
    sweepBuckets(idleBefore: number): RawBuilder<unknown> {
      return sql`delete from "rateLimitBuckets" where "tat" < ${number(idleBefore)}`
    },
  }
}
