import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { LimitError } from '../../kernel/base/errors.ts'
import { OTP_CHANNELS, OTP_DELIVERY_JOB, type OtpDeliveryPayload } from '../../kernel/otpDelivery.ts'
import type { Runtime } from '../../kernel/Runtime.ts'
import type { Transaction } from '../../kernel/store/Store.ts'
import type { OtpRecord, OtpStorage } from './createOtpEngine.ts'
import { otpTargetRowId } from './otpEncryptionTarget.ts'

/** Most OTP records kept at once service-wide; expired ones are dropped first. */
export const MAX_OTP_RECORDS = 10_000
/** Most rate-limit buckets (contacts, client addresses) kept at once; idle ones are dropped first. */
export const MAX_RATE_BUCKETS = 20_000
/** An OTP record is kept this long after it expired (so a late guess still reads "expired"). */
const OTP_KEEP_AFTER_EXPIRY_MS = 10 * 60_000
const HOUR_MS = 3_600_000

/** Row id of a rate-limit bucket: the key (a contact, an address) is hashed so rows stay small. */
const bucketRowId = (key: string) => `otp-limit:${bytesToHex(sha256(utf8ToBytes(key)))}`

const full = (what: string) =>
  new LimitError({
    message: `the service holds too many ${what}; try again later`,
    extra: {
      retryAfterSeconds: 60,
    },
  })

/**
 * OTP records and rate-limit buckets, in the database, each engine step in its own serializable
 * transaction (apart from the activity's, so a wrong code still counts though the activity
 * fails). Both kinds are capped: when a cap is reached, expired records and idle buckets are
 * deleted, and if it is still reached a new one is refused (429), so unauthenticated callers
 * cannot grow the database without bound.
 */
export function otpStorage(runtime: Runtime): OtpStorage {
  const prune = async (tx: Transaction, kind: 'otp' | 'otp-limit') => {
    const at = runtime.now()
    for (const row of await tx.findBy('pluginRows', 'kind', kind)) {
      const stale =
        kind === 'otp'
          ? (row.data as unknown as OtpRecord).expiresAtMs + OTP_KEEP_AFTER_EXPIRY_MS < at
          : row.updatedAt + HOUR_MS < at
      if (!stale) continue
      await tx.delete('pluginRows', row.id)
      // A code's encryption target (`otp_init_v2`, otpEncryptionTarget.ts) goes with it: no code
      // is left for it to open.
      if (kind === 'otp') {
        const target = otpTargetRowId((row.data as unknown as OtpRecord).otpId)
        if (await tx.get('pluginRows', target)) await tx.delete('pluginRows', target)
      }
    }
    // A target whose code was never recorded (its init refused after it was made) expires alone.
    if (kind === 'otp')
      for (const row of await tx.findBy('pluginRows', 'kind', 'otp-target'))
        if (((row.data as { expiresAtMs?: number }).expiresAtMs ?? 0) < at)
          await tx.delete('pluginRows', row.id)
  }
  // Expired rows are swept at most every 10 s per process (the caps are checked on every insert).
  const lastSweep = { otp: Number.NEGATIVE_INFINITY, 'otp-limit': Number.NEGATIVE_INFINITY }
  const room = async (tx: Transaction, kind: 'otp' | 'otp-limit', max: number, what: string) => {
    if (runtime.now() - lastSweep[kind] >= 10_000) {
      lastSweep[kind] = runtime.now()
      await prune(tx, kind)
    }
    if ((await tx.count('pluginRows', 'kind', kind)) < max) return
    await prune(tx, kind)
    if ((await tx.count('pluginRows', 'kind', kind)) >= max) throw full(what)
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
            if (!existing) await room(tx, 'otp', MAX_OTP_RECORDS, 'pending one-time codes')
            const now = runtime.now()
            await tx.put('pluginRows', {
              id: `otp:${record.otpId}`,
              kind: 'otp',
              organizationId: record.organizationId,
              data: { ...record },
              createdAt: existing?.createdAt ?? now,
              updatedAt: now,
            })
          },
          getBucket: async (key) => {
            const row = await tx.get('pluginRows', bucketRowId(key))
            return row ? [...((row.data as { times: number[] }).times ?? [])] : []
          },
          putBucket: async (key, times) => {
            const id = bucketRowId(key)
            const existing = await tx.get('pluginRows', id)
            if (times.length === 0) {
              if (existing) await tx.delete('pluginRows', id)
              return
            }
            if (!existing) await room(tx, 'otp-limit', MAX_RATE_BUCKETS, 'rate-limit entries')
            const now = runtime.now()
            await tx.put('pluginRows', {
              id,
              kind: 'otp-limit',
              data: { times },
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
