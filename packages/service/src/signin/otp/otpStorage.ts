import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { LimitError } from '../../kernel/base/errors.ts'
import { OTP_CHANNELS, OTP_DELIVERY_JOB, type OtpDeliveryPayload } from '../../kernel/otpDelivery.ts'
import type { Runtime } from '../../kernel/Runtime.ts'
import { staleAtKey } from '../../kernel/store/model.ts'
import type { Transaction } from '../../kernel/store/Store.ts'
import type { OtpRecord, OtpStorage } from './createOtpEngine.ts'
import { otpTargetRowId } from './otpEncryptionTarget.ts'

/**
 * Most OTP records kept at once service-wide (`[otp] max_pending_codes`); stale ones are swept
 * first. Large, so that filling it takes thousands of networks under the per-network budgets of
 * `otp_init` (docs/security.md, "Shared budgets"): it is a bound on storage, not a budget.
 */
export const MAX_OTP_RECORDS = 200_000
/**
 * Most rate-limit entries (contacts, networks, organizations) kept at once (`[otp] max_rate_entries`):
 * a /48 spraying from a fresh /64 and /56 for each code holds about 1,000 (each network's kept an
 * hour, each contact's codes 10 minutes and its guesses while its code lives, 5 minutes by
 * default), so filling it takes about 1,000 /48s.
 */
export const MAX_RATE_BUCKETS = 1_000_000
/** An OTP record is kept this long after it expired (so a late guess still reads "expired"). */
const OTP_KEEP_AFTER_EXPIRY_MS = 10 * 60_000
const HOUR_MS = 3_600_000
/** Stale rows one sweep deletes at most: a page through the (kind, staleAt) index. */
const SWEEP_PAGE = 500

/** The caps of `otpStorage` (`[otp]` in the configuration). */
export interface OtpStorageCaps {
  /** @default MAX_OTP_RECORDS */
  maxPendingCodes?: number
  /** @default MAX_RATE_BUCKETS */
  maxRateEntries?: number
}

/**
 * Rows of a capped kind one process adds between two counts of it at most: 1% of the cap, at
 * least 10 (so N instances overshoot a cap by less than N% of it, or N x 10 rows).
 */
const uncheckedOf = (max: number) => Math.max(10, Math.ceil(max / 100))

/**
 * What a rate-limit bucket's row holds: its event times, and until when it is kept even with none
 * (`keepBucket`: a contact's guess bucket while a code sent to it can be verified).
 */
interface BucketData {
  times: number[]
  keepUntil?: number
}

/** A bucket row's `keepUntil` while it is still ahead of `now`. */
const keepUntilOf = (data: unknown, now: number): number | undefined => {
  const keepUntil = (data as BucketData | undefined)?.keepUntil
  return keepUntil !== undefined && keepUntil > now ? keepUntil : undefined
}

/** Row id of a rate-limit bucket: the key (a contact, an address) is hashed so rows stay small. */
const bucketRowId = (key: string) => `otp-limit:${bytesToHex(sha256(utf8ToBytes(key)))}`

const full = (what: string, limit: string) =>
  new LimitError({
    message: `the service holds too many ${what}; try again later`,
    extra: {
      retryAfterSeconds: 60,
      limit,
    },
  })

/**
 * OTP records and rate-limit buckets, in the database, each engine step in its own serializable
 * transaction (apart from the activity's, so a wrong code still counts though the activity
 * fails). Every row is written with the time it goes stale (`PluginRow.staleAt`: a code 10
 * minutes after it expired, a bucket once its longest window has passed since its last write), and
 * sweeps read only stale rows, a page at a time, through the (kind, staleAt) index. Both kinds are
 * capped (`caps`): when a cap is reached a page of stale rows is swept, and if it is still reached
 * a new one is refused (429 with `retryAfterSeconds`), so unauthenticated callers cannot grow the
 * database without bound.
 */
export function otpStorage(runtime: Runtime, caps: OtpStorageCaps = {}): OtpStorage {
  const maxCodes = caps.maxPendingCodes ?? MAX_OTP_RECORDS
  const maxBuckets = caps.maxRateEntries ?? MAX_RATE_BUCKETS
  /** Deletes at most a page of the rows of `kind` already stale; answers how many it deleted. */
  const sweep = async (tx: Transaction, kind: 'otp' | 'otp-limit' | 'otp-target') => {
    const stale = await tx.pageBy('pluginRows', {
      field: 'kind',
      value: kind,
      by: 'staleAt',
      after: staleAtKey(runtime.now()),
      descending: true,
      limit: SWEEP_PAGE,
    })
    for (const row of stale) {
      await tx.delete('pluginRows', row.id)
      // A code's encryption target (`otp_init_v2`, otpEncryptionTarget.ts) goes with it: no code
      // is left for it to open.
      if (kind === 'otp') {
        const target = otpTargetRowId((row.data as unknown as OtpRecord).otpId)
        if (await tx.get('pluginRows', target)) await tx.delete('pluginRows', target)
      }
    }
    return stale.length
  }
  // Stale rows are swept at most every 10 s per process.
  const lastSweep = { otp: Number.NEGATIVE_INFINITY, 'otp-limit': Number.NEGATIVE_INFINITY }
  const capOf = {
    otp: {
      max: maxCodes,
      unchecked: uncheckedOf(maxCodes),
      what: 'pending one-time codes',
      limit: 'maxPendingCodes',
    },
    'otp-limit': {
      max: maxBuckets,
      unchecked: uncheckedOf(maxBuckets),
      what: 'rate-limit entries',
      limit: 'maxRateEntries',
    },
  }
  // What a kind held when this process last counted it (with the rows it has added since), and
  // how many rows it has added since. A count reads the kind's whole index (up to a million
  // entries) and, in a serializable transaction, conflicts with every other insert of the kind, so
  // it is made only when 10 s have passed since the last one, or this process has added
  // `unchecked` rows since, or it sees the kind at 90% of its cap (then on every insert). A count
  // sees every row committed before it, so N instances together pass a cap by at most
  // N x (`unchecked` - 1) rows, under N% of a cap of 1,000 or more. (Adding for 10 s until its
  // own figure reached 90% of the cap let each instance pass it by up to 90% of it.)
  const counted = {
    otp: { rows: 0, added: 0, at: Number.NEGATIVE_INFINITY },
    'otp-limit': { rows: 0, added: 0, at: Number.NEGATIVE_INFINITY },
  }
  const room = async (tx: Transaction, kind: 'otp' | 'otp-limit') => {
    const { max, unchecked, what, limit } = capOf[kind]
    const now = runtime.now()
    if (now - lastSweep[kind] >= 10_000) {
      lastSweep[kind] = now
      await sweep(tx, kind)
      // A target whose code was never recorded (its init refused after it was made) expires alone.
      if (kind === 'otp') await sweep(tx, 'otp-target')
    }
    const known = counted[kind]
    if (now - known.at < 10_000 && known.added < unchecked && known.rows < max * 0.9) {
      known.rows++
      known.added++
      return
    }
    const rows = await tx.count('pluginRows', 'kind', kind)
    counted[kind] = { rows: rows + 1, added: 1, at: now }
    if (rows < max) return
    if ((await sweep(tx, kind)) > 0 && (await tx.count('pluginRows', 'kind', kind)) < max) return
    throw full(what, limit)
  }
  return {
    transaction: (fn) =>
      runtime.store.transaction((tx) =>
        fn({
          get: async (otpId) => {
            const row = await tx.get('pluginRows', `otp:${otpId}`)
            return row?.kind === 'otp' ? (row.data as unknown as OtpRecord) : undefined
          },
          put: async (record) => {
            const existing = await tx.get('pluginRows', `otp:${record.otpId}`)
            if (!existing) await room(tx, 'otp')
            const now = runtime.now()
            await tx.put('pluginRows', {
              id: `otp:${record.otpId}`,
              kind: 'otp',
              organizationId: record.organizationId,
              data: { ...record },
              staleAt: record.expiresAtMs + OTP_KEEP_AFTER_EXPIRY_MS,
              createdAt: existing?.createdAt ?? now,
              updatedAt: now,
            })
          },
          getBucket: async (key) => {
            const row = await tx.get('pluginRows', bucketRowId(key))
            return row ? [...((row.data as unknown as BucketData).times ?? [])] : []
          },
          putBucket: async (key, times, keepMs = HOUR_MS) => {
            const id = bucketRowId(key)
            const existing = await tx.get('pluginRows', id)
            const now = runtime.now()
            const keepUntil = keepUntilOf(existing?.data, now)
            if (times.length === 0 && keepUntil === undefined) {
              if (existing) await tx.delete('pluginRows', id)
              return
            }
            if (!existing) await room(tx, 'otp-limit')
            await tx.put('pluginRows', {
              id,
              kind: 'otp-limit',
              data: keepUntil === undefined ? { times } : { times, keepUntil },
              // Nothing in it counts once its longest window has passed since it was last written;
              // a bucket kept for a code (`keepBucket`) stays until then.
              staleAt: Math.max(now + Math.min(HOUR_MS, keepMs), keepUntil ?? 0),
              createdAt: existing?.createdAt ?? now,
              updatedAt: now,
            })
          },
          keepBucket: async (key, untilMs) => {
            const id = bucketRowId(key)
            const existing = await tx.get('pluginRows', id)
            const now = runtime.now()
            const kept = keepUntilOf(existing?.data, now) ?? 0
            if (existing && kept >= untilMs) return
            if (!existing) await room(tx, 'otp-limit')
            const keepUntil = Math.max(kept, untilMs)
            const times = existing ? ((existing.data as unknown as BucketData).times ?? []) : []
            await tx.put('pluginRows', {
              id,
              kind: 'otp-limit',
              data: { times, keepUntil },
              // Swept neither before `keepUntil` nor while its times may count (an hour at most).
              staleAt: Math.max(keepUntil, ...times.map((t) => t + HOUR_MS)),
              createdAt: existing?.createdAt ?? now,
              updatedAt: now,
            })
          },
          // One job per code (its id is the OTP's), sealed: it holds the code and the contact.
          enqueueDelivery: async (message, details) => {
            // The delivery wing says which channels it sends; the others go to the dev outbox.
            if (!runtime.stateOf(OTP_CHANNELS).handles(message.otpType)) return false
            const payload: OtpDeliveryPayload = {
              otpType: message.otpType,
              to: message.contact,
              code: message.code,
              appName: details.appName,
              expiresInMinutes: details.expiresInMinutes,
              subject: message.subject,
              body: message.body,
            }
            await runtime.jobs.enqueue(tx, OTP_DELIVERY_JOB, payload, {
              sealed: true,
              id: `otp:${message.otpId}`,
            })
            return true
          },
        }),
      ),
  }
}
