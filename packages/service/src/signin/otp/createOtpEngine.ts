import type { OtpType, VerificationTokenClaims } from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { hmac } from '@noble/hashes/hmac.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { type ApiError, CredentialError, FieldError, LimitError } from '../../kernel/base/errors.ts'
import { mailboxOf, normalizeContact } from './normalizeContact.ts'
import { CROCKFORD_ALPHABET, normalizeCode, randomCode, randomDigits } from './randomDigits.ts'
import { DEFAULT_EMAIL_TEMPLATE, DEFAULT_SMS_TEMPLATE, renderTemplate } from './renderTemplate.ts'

/** What the engine keeps about one OTP. The code itself is never stored, only its keyed MAC. */
export interface OtpRecord {
  otpId: string
  /** Organization the OTP was started in (the parent organization for proxy calls). */
  organizationId: string
  otpType: OtpType
  contact: string
  /** Lowercase hex HMAC-SHA256 of `${otpId}:${code}` under the server's OTP secret (never a plain hash). */
  codeMac: string
  createdAtMs: number
  expiresAtMs: number
  /** Wrong codes entered so far. */
  attempts: number
  /** Requested with a passed CAPTCHA: its wrong guesses count in the contact's own CAPTCHA budget. */
  captcha?: true
  /** Letters and digits (`OtpInitInput.alphabet`); absent: digits only. */
  alphabet?: 'alphanumeric'
  status: 'pending' | 'used' | 'locked'
}

/** OTP records and rate-limit buckets, as seen inside one storage transaction. */
export interface OtpStorageTx {
  get(otpId: string): Promise<OtpRecord | undefined>
  put(record: OtpRecord): Promise<void>
  /** Event times (epoch ms) still counted for a rate-limit key. */
  getBucket(key: string): Promise<number[]>
  /**
   * Stores a key's event times; an empty list deletes the bucket. `keepMs`: how long after this
   * write the bucket still counts (its limit's longest window), after which it may be swept.
   * @default an hour
   */
  putBucket(key: string, times: number[], keepMs?: number): Promise<void>
  /**
   * Keeps `key`'s bucket, an empty one if it has none, until at least `untilMs` (epoch ms): no
   * sweep removes it and no `putBucket` deletes it before then, so writing it until then needs no
   * room in a capped store. Making it needs room like any new bucket.
   */
  keepBucket(key: string, untilMs: number): Promise<void>
  /**
   * Commits a durable delivery of `message` with this transaction, when its channel has a
   * provider; resolves false when it has none (the engine's `deliver` then gets it after the commit).
   */
  enqueueDelivery?(message: OtpMessage, details: OtpDeliveryDetails): Promise<boolean>
}

/** What a provider's own templates may add to a message. */
export interface OtpDeliveryDetails {
  appName: string
  expiresInMinutes: number
}

/**
 * Where OTP records and rate-limit buckets live: the service's database (each check and its
 * charge in one serializable transaction, so budgets hold across instances), or memory in tests.
 * `transaction` may rerun `fn` on a conflict, so `fn` only reads and writes storage.
 */
export interface OtpStorage {
  transaction<R>(fn: (tx: OtpStorageTx) => Promise<R>): Promise<R>
}

/** Storage in this process's memory, one transaction at a time (standalone engines, tests). */
export function memoryOtpStorage(): OtpStorage & { records: Map<string, OtpRecord> } {
  const records = new Map<string, OtpRecord>()
  const buckets = new Map<string, number[]>()
  let queue: Promise<unknown> = Promise.resolve()
  const tx: OtpStorageTx = {
    get: async (otpId) => records.get(otpId),
    put: async (record) => {
      records.set(record.otpId, { ...record })
    },
    getBucket: async (key) => [...(buckets.get(key) ?? [])],
    putBucket: async (key, times) => {
      if (times.length === 0) buckets.delete(key)
      else buckets.set(key, [...times])
    },
    // Memory is not capped, so a bucket needs no room kept for it.
    keepBucket: async () => {},
  }
  return {
    records,
    transaction(fn) {
      const run = queue.then(() => fn(tx))
      queue = run.catch(() => undefined)
      return run
    },
  }
}

/**
 * The operator's bound on SMS codes, which cost money per message to numbers the caller chooses
 * (SMS pumping: codes asked for premium-rate numbers, a different one each time, so no
 * per-contact budget sees it).
 */
export interface SmsBudget {
  /** SMS codes the service sends in one clock hour, every instance and organization together. */
  maxPerHour?: number
  /**
   * Of `maxPerHour`, how many may go to numbers no user holds verified (sign-ups, new numbers): a
   * pumping attack asks codes for numbers of its own choosing, so it can spend only this share,
   * and the rest stays for the users whose numbers the service knows (their sign-ins and MFA
   * codes). At most `maxPerHour`. @default half of `maxPerHour`, rounded up
   */
  maxPerHourNewNumbers?: number
  /** ISO 3166-1 alpha-2 countries whose numbers get SMS codes; others are refused (400). */
  allowedCountries?: readonly string[]
}

/** Events allowed per window for one rate-limit key. */
export interface RateLimit {
  perMinute: number
  /** Events allowed in the longer window. */
  perWindow: number
  /** The longer window in minutes (at most 60). @default 60 */
  windowMinutes?: number
}

/**
 * Codes sent per contact. The longer window is 10 minutes, so a burst of requests from any
 * number of addresses keeps a contact from getting a code for at most 10 minutes after it.
 */
export const SEND_LIMIT: RateLimit = { perMinute: 3, perWindow: 5, windowMinutes: 10 }

/**
 * Codes sent per contact with a passed CAPTCHA (`captchaPass`), which skip `SEND_LIMIT`: a
 * solved CAPTCHA proves a human (or a paid solver), not that the contact wants more codes, so
 * message bombing and SMS pumping stay bounded. Counted apart from `SEND_LIMIT`, so requests
 * without a CAPTCHA cannot spend it.
 */
export const CAPTCHA_SEND_LIMIT: RateLimit = { perMinute: 10, perWindow: 10, windowMinutes: 10 }

/**
 * Wrong codes per contact across all its OTPs and organizations: at most 1,440 a day, so the
 * chance of guessing one account's code in a day is 1,440 / 10^digits (see docs/security.md).
 */
export const GUESS_LIMIT: RateLimit = { perMinute: 10, perWindow: 10, windowMinutes: 10 }

/**
 * The bucket of a contact's wrong guesses: codes sent after a passed CAPTCHA have one of their own,
 * which guesses at codes anyone can request without one do not spend.
 */
const guessKeyOf = (contact: string, captcha: boolean) => `${captcha ? 'guess-captcha' : 'guess'}:${contact}`

/** A rendered message handed to delivery (the dev outbox, or a mail/SMS gateway). */
export interface OtpMessage {
  otpId: string
  organizationId: string
  otpType: OtpType
  contact: string
  code: string
  /** E-mail subject; empty for SMS. */
  subject: string
  body: string
  /** ISO 8601. */
  sentAt: string
}

export interface OtpEngineOptions {
  storage: OtpStorage
  /** Signs verification-token claims into a JWT (the service's ES256 key). */
  issueToken: (claims: VerificationTokenClaims & { iat: number }) => Promise<string> | string
  /**
   * Delivers the rendered message after its record committed, where the storage queued no durable
   * delivery (`OtpStorageTx.enqueueDelivery`). The only place a code may ever be seen.
   */
  deliver: (message: OtpMessage) => Promise<void> | void
  /** Told after a commit that queued a durable delivery (wakes the worker). @default nothing */
  queued?: () => void
  /** Epoch milliseconds. @default Date.now */
  now?: () => number
  /** Fills a byte array with CSPRNG output. @default crypto.getRandomValues */
  randomBytes?: (bytes: Uint8Array) => Uint8Array
  /** New id for an OTP or a verification token. @default crypto.randomUUID */
  newId?: () => string
  /**
   * Keyed MAC of `${otpId}:${code}` (hex). The service uses HMAC-SHA256 under a secret sealed with
   * its master key, so stored records cannot be brute-forced offline.
   * @default HMAC-SHA256 under a random key held by this engine
   */
  mac?: (message: string) => string
  /** Wrong codes accepted before the OTP is dead. @default 5 */
  maxAttempts?: number
  /** `init` calls allowed per contact (service-wide, every organization and path). @default SEND_LIMIT */
  rateLimit?: RateLimit
  /** `init` calls with a CAPTCHA pass allowed per contact (service-wide). @default CAPTCHA_SEND_LIMIT */
  captchaSendLimit?: RateLimit
  /** What SMS codes may cost the operator (`SmsBudget`). @default no bound */
  smsBudget?: SmsBudget
  /**
   * Whether a user holds `number` (E.164) as a verified phone number: codes to it are not charged
   * to `SmsBudget.maxPerHourNewNumbers`. @default no number is known
   */
  knownNumber?: (number: string) => Promise<boolean>
  /** Wrong codes allowed per contact across all its OTPs. @default GUESS_LIMIT */
  guessLimit?: RateLimit
  /** Code lifetime when the caller gives none. @default 300 */
  defaultExpirationSeconds?: number
  /** Verification-token lifetime when the caller gives none. @default 600 */
  defaultTokenExpirationSeconds?: number
}

/** The characters of a one-time code. */
export type OtpAlphabet = 'digits' | 'alphanumeric'

export interface OtpInitInput {
  organizationId: string
  /** Longest lifetime the operator allows; a longer `expirationSeconds` is cut to it. @default 300 */
  maxExpirationSeconds?: number
  otpType: OtpType
  contact: unknown
  /** 6 to 9. @default 6 */
  otpLength?: number
  /** `digits` (0-9) or `alphanumeric` (Crockford's base 32: 0-9 and A-Z without I, L, O, U). @default 'digits' */
  alphabet?: OtpAlphabet
  expirationSeconds?: number
  /** Shown in the message. @default 'Latchkey' */
  appName?: string
  emailTemplate?: { subject: string; body: string }
  smsTemplate?: { body: string }
  /**
   * A pass from `grantCaptchaPass` for this contact: the code skips the contact's send budget and
   * is charged to its CAPTCHA ceiling (`captchaSendLimit`) instead.
   */
  captchaPass?: string
  /**
   * Codes `organizationId` may be sent in all, besides each contact's budget: an end user's
   * sub-organization (`operatorOtpInit`), so one account holding many verified contacts cannot
   * fill the service's store of codes. Charged in the code's own transaction. @default no budget
   */
  organizationLimit?: RateLimit
  /**
   * The user of `organizationId` asking this code for themself, to their own verified contact (an
   * MFA code): `organizationLimit` is then charged to that user's own budget in the organization
   * (`organization:<id>:user:<userId>`, every contact and channel of theirs together) instead of
   * the organization's shared one, so one user cannot spend the codes of every other user of the
   * account. @default the organization's shared budget
   */
  limitUserId?: string
}

/**
 * Codes one end user's sub-organization may be sent (`init_otp` to its users' verified contacts),
 * and, apart, the MFA codes each of its users may ask for themself (`limitUserId`): a user signs
 * in and proves a step with a handful an hour, and an account that verified many contacts still
 * holds at most 20 sign-in codes an hour (5 at once, as a code lives 15 minutes) instead of 30 an
 * hour per contact, and each user at most 20 MFA codes an hour, e-mail and SMS together.
 */
export const SUB_ORGANIZATION_SEND_LIMIT: RateLimit = { perMinute: 5, perWindow: 20 }

/**
 * MFA codes all the users of one sub-organization may ask for themselves (`limitUserId`), beside
 * each user's own `SUB_ORGANIZATION_SEND_LIMIT`: five users' worth, so no one user reaches it, and
 * an account that verified a contact for each of many users still makes the operator send at most
 * 100 MFA codes an hour, not 20 a user.
 */
export const SUB_ORGANIZATION_MFA_LIMIT: RateLimit = { perMinute: 15, perWindow: 100 }

export interface OtpVerifyInput {
  organizationId: string
  otpId: string
  otpCode: string
  /** Compressed P-256 public key hex the token (and so the later login) is bound to. */
  publicKey?: string
  tokenExpirationSeconds?: number
}

export type OtpEngine = ReturnType<typeof createOtpEngine>

/** How long a CAPTCHA pass waits for its `init`. */
const CAPTCHA_PASS_MS = 120_000

const MINUTE_MS = 60_000
const HOUR_MS = 3_600_000

/** Compressed P-256 public key hex (66 chars, 02/03 prefix, a point on the curve). */
export function isCompressedP256PublicKey(value: unknown): value is string {
  if (typeof value !== 'string' || !/^0[23][0-9a-f]{64}$/.test(value)) return false
  try {
    p256.Point.fromHex(value)
    return true
  } catch {
    return false
  }
}

/** Constant-time comparison of two equal-length hex strings. */
function sameHex(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return diff === 0
}

/**
 * Whether SMS codes go to `contact` (E.164) under the operator's list of countries (`allowed`): a number
 * whose country its plan does not tell (a non-geographic one) is outside. The full numbering plans
 * (loaded on first use) tell a UK mobile from a Guernsey one, and a US number from a Jamaican one,
 * which share +44 and +1.
 */
async function smsCountryAllowed(contact: string, allowed: readonly string[]): Promise<boolean> {
  const { parsePhoneNumberFromString } = await import('libphonenumber-js/max')
  const country = parsePhoneNumberFromString(contact)?.country
  return country !== undefined && allowed.includes(country)
}

/** Refuses an SMS code to a number outside `allowed` (`smsCountryAllowed`), naming `contact`. */
async function assertSmsCountry(contact: string, allowed: readonly string[] | undefined): Promise<void> {
  if (allowed === undefined || (await smsCountryAllowed(contact, allowed))) return
  throw new FieldError({
    code: 'CONTACT_INVALID',
    field: 'contact',
    reason: `is a number this service does not send SMS codes to (it sends them to numbers of ${allowed.join(', ')})`,
    // The kit tells "not a phone number" from "not a country we text" by this.
    extra: { allowedCountries: [...allowed] },
  })
}

/**
 * Counts one SMS code in this clock hour's count (and, for a number no user holds, in the hour's
 * count of such numbers), inside the code's own transaction, so the bound holds across instances
 * (PostgreSQL serialises the counts' rows); over either, 429 `OTP_RATE_LIMITED` until the next
 * hour, naming the bound. Counts, not lists of times: one row each however large the bound.
 */
async function chargeSmsHour(
  tx: OtpStorageTx,
  budget: { maxPerHour: number; newNumbers: number | undefined },
  at: number,
): Promise<void> {
  const hour = Math.floor(at / HOUR_MS)
  const retryAfterSeconds = Math.max(1, Math.ceil(((hour + 1) * HOUR_MS - at) / 1000))
  const key = `sms-codes-in-hour:${hour}`
  const newKey = `sms-codes-to-new-numbers-in-hour:${hour}`
  const [sent = 0] = await tx.getBucket(key)
  if (sent >= budget.maxPerHour)
    throw new LimitError({
      code: 'OTP_RATE_LIMITED',
      message:
        'the service has sent as many SMS codes as it may this hour; try again later, or sign in another way',
      extra: { retryAfterSeconds, limit: 'smsPerHour' },
    })
  if (budget.newNumbers !== undefined) {
    const [toNew = 0] = await tx.getBucket(newKey)
    if (toNew >= budget.newNumbers)
      throw new LimitError({
        code: 'OTP_RATE_LIMITED',
        message:
          'the service has sent as many SMS codes to new numbers as it may this hour; try again later, or sign in another way',
        extra: { retryAfterSeconds, limit: 'smsPerHourNewNumbers' },
      })
    await tx.putBucket(newKey, [toNew + 1])
  }
  await tx.putBucket(key, [sent + 1])
}

/**
 * The OTP engine: CSPRNG codes, single use, expiring, bound at verification to the caller's
 * public key, locked after `maxAttempts` wrong codes, and `init` rate-limited per contact.
 */
export function createOtpEngine(options: OtpEngineOptions) {
  const now = options.now ?? Date.now
  const newId = options.newId ?? (() => crypto.randomUUID())
  const maxAttempts = options.maxAttempts ?? 5
  const limits = options.rateLimit ?? SEND_LIMIT
  const guessLimits = options.guessLimit ?? GUESS_LIMIT
  const captchaLimits = options.captchaSendLimit ?? CAPTCHA_SEND_LIMIT
  const defaultExpiration = options.defaultExpirationSeconds ?? 300
  const defaultTokenExpiration = options.defaultTokenExpirationSeconds ?? 600
  const macKey = options.mac ? undefined : crypto.getRandomValues(new Uint8Array(32))
  const mac = options.mac ?? ((message: string) => bytesToHex(hmac(sha256, macKey!, utf8ToBytes(message))))
  const macOf = (otpId: string, code: string) => mac(`${otpId}:${code}`)
  const storage = options.storage

  /** The longer window of `limit`, in ms (at most an hour). */
  const windowOf = (limit: RateLimit) => Math.min(HOUR_MS, (limit.windowMinutes ?? 60) * MINUTE_MS)

  /** Seconds until `key` may be charged again, or 0 when it may be now. */
  async function waitFor(tx: OtpStorageTx, key: string, limit: RateLimit, at: number): Promise<number> {
    const windowMs = windowOf(limit)
    const recent = (await tx.getBucket(key)).filter((t) => at - t < windowMs)
    const lastMinute = recent.filter((t) => at - t < MINUTE_MS)
    if (lastMinute.length >= limit.perMinute) return Math.ceil((lastMinute[0]! + MINUTE_MS - at) / 1000)
    if (recent.length >= limit.perWindow) return Math.ceil((recent[0]! + windowMs - at) / 1000)
    return 0
  }

  /**
   * Records one event for `key` (keeping only the last hour), kept while `limit`'s longer window
   * counts it: a contact's bucket goes stale 10 minutes after its last code, not an hour.
   */
  async function recordEvent(tx: OtpStorageTx, key: string, at: number, limit: RateLimit): Promise<void> {
    await tx.putBucket(
      key,
      [...(await tx.getBucket(key)).filter((t) => at - t < HOUR_MS), at],
      windowOf(limit),
    )
  }

  type Charge = { key: string; limit: RateLimit; message: string; field?: string }

  /** Checks every key, then charges them all, inside `tx`; throws `OTP_RATE_LIMITED` for the first one over. */
  async function chargeIn(tx: OtpStorageTx, keys: Charge[], at: number): Promise<void> {
    for (const { key, limit, message, field } of keys) {
      const retryAfterSeconds = await waitFor(tx, key, limit, at)
      if (retryAfterSeconds > 0)
        throw new LimitError({
          code: 'OTP_RATE_LIMITED',
          field,
          message,
          extra: {
            retryAfterSeconds: Math.max(1, retryAfterSeconds),
          },
        })
    }
    for (const { key, limit } of keys) await recordEvent(tx, key, at, limit)
  }

  /**
   * Checks and charges one event for each key, all or none, in one storage transaction: the first
   * key over its limit throws `OTP_RATE_LIMITED` with `retryAfterSeconds`.
   */
  function charge(keys: Charge[], at = now()): Promise<void> {
    return storage.transaction((tx) => chargeIn(tx, keys, at))
  }

  async function init(input: OtpInitInput): Promise<{ otpId: string }> {
    const { otpType } = input
    if (otpType !== 'OTP_TYPE_EMAIL' && otpType !== 'OTP_TYPE_SMS')
      throw new FieldError({
        code: 'ENUM_INVALID',
        field: 'otpType',
        reason: 'must be OTP_TYPE_EMAIL or OTP_TYPE_SMS',
      })
    const contact = normalizeContact(otpType, input.contact)
    if (otpType === 'OTP_TYPE_SMS') await assertSmsCountry(contact, options.smsBudget?.allowedCountries)
    const maxPerHour = otpType === 'OTP_TYPE_SMS' ? options.smsBudget?.maxPerHour : undefined
    // A number a user holds verified is not charged to the new numbers' share; read before the
    // code's transaction (who holds a number is not part of the count).
    const smsHour =
      maxPerHour === undefined
        ? undefined
        : {
            maxPerHour,
            newNumbers: (await options.knownNumber?.(contact))
              ? undefined
              : (options.smsBudget?.maxPerHourNewNumbers ?? Math.ceil(maxPerHour / 2)),
          }
    const length = input.otpLength ?? 6
    if (!Number.isInteger(length) || length < 6 || length > 9)
      throw new FieldError({ field: 'otpLength', reason: 'must be an integer from 6 to 9' })
    const requested = input.expirationSeconds ?? defaultExpiration
    if (!Number.isInteger(requested) || requested < 30 || requested > 86_400)
      throw new FieldError({ field: 'expirationSeconds', reason: 'must be an integer from 30 to 86400' })
    // The operator's setting caps the lifetime: a caller may shorten a code's life, never extend it.
    const lifetime = Math.min(requested, input.maxExpirationSeconds ?? defaultExpiration)
    const at = now()
    // Keyed on the contact alone: every organization and every path share one budget per person.
    const otpId = newId()
    const code =
      input.alphabet === 'alphanumeric'
        ? randomCode(length, CROCKFORD_ALPHABET, options.randomBytes)
        : randomDigits(length, options.randomBytes)
    const record: OtpRecord = {
      otpId,
      organizationId: input.organizationId,
      otpType,
      contact,
      codeMac: macOf(otpId, code),
      createdAtMs: at,
      expiresAtMs: at + lifetime * 1000,
      attempts: 0,
      ...(input.alphabet === 'alphanumeric' ? { alphabet: 'alphanumeric' as const } : {}),
      status: 'pending',
    }
    const values = { code, appName: input.appName ?? 'Latchkey', expiresInMinutes: Math.ceil(lifetime / 60) }
    const email = input.emailTemplate ?? DEFAULT_EMAIL_TEMPLATE
    const sms = input.smsTemplate ?? DEFAULT_SMS_TEMPLATE
    const message: OtpMessage = {
      otpId,
      organizationId: input.organizationId,
      otpType,
      contact,
      code,
      subject: otpType === 'OTP_TYPE_EMAIL' ? renderTemplate(email.subject, values) : '',
      body: renderTemplate(otpType === 'OTP_TYPE_EMAIL' ? email.body : sms.body, values),
      sentAt: new Date(at).toISOString(),
    }
    // The charge, the record and a durable delivery commit together: a code is sent only within
    // the contact's budget (or with a passed CAPTCHA, spent here, within the contact's CAPTCHA
    // ceiling), and every committed code is sent.
    const queued = await storage.transaction(async (tx) => {
      const passKey = input.captchaPass !== undefined ? `captcha-pass:${input.captchaPass}:${contact}` : ''
      const pass = passKey ? (await tx.getBucket(passKey)).filter((t) => at - t < CAPTCHA_PASS_MS) : []
      await chargeIn(
        tx,
        [
          ...(input.organizationLimit
            ? [
                ...(input.limitUserId !== undefined
                  ? [
                      {
                        key: `organization:${input.organizationId}:user:${input.limitUserId}`,
                        limit: input.organizationLimit,
                        message: 'too many codes requested by this user; try again later',
                      },
                      {
                        key: `organization:${input.organizationId}:mfa`,
                        limit: SUB_ORGANIZATION_MFA_LIMIT,
                        message: "too many MFA codes requested by this organization's users; try again later",
                      },
                    ]
                  : [
                      {
                        key: `organization:${input.organizationId}`,
                        limit: input.organizationLimit,
                        message: 'too many codes requested in this organization; try again later',
                      },
                    ]),
              ]
            : []),
          pass.length > 0
            ? {
                key: `send-captcha:${mailboxOf(contact)}`,
                limit: captchaLimits,
                message: 'too many codes sent to this contact, even with a solved CAPTCHA; try again later',
                field: 'contact',
              }
            : {
                key: `send:${mailboxOf(contact)}`,
                limit: limits,
                message: 'too many codes requested for this contact; try again later',
                field: 'contact',
              },
        ],
        at,
      )
      if (smsHour) await chargeSmsHour(tx, smsHour, at)
      // Spent only once the code is let in (a refusal above leaves it for the next try).
      if (pass.length > 0) await tx.putBucket(passKey, [])
      // The contact's guess bucket is made (or kept) now, for as long as the code can be
      // verified: `verify` charges each guess to it before comparing the code, and with the bucket
      // already there that charge needs no room, so a full store of rate-limit entries
      // (`[otp] max_rate_entries`) refuses new codes, never the codes already sent.
      await tx.keepBucket(guessKeyOf(contact, pass.length > 0), record.expiresAtMs)
      await tx.put(pass.length > 0 ? { ...record, captcha: true } : record)
      return tx.enqueueDelivery
        ? tx.enqueueDelivery(message, { appName: values.appName, expiresInMinutes: values.expiresInMinutes })
        : false
    })
    if (queued) options.queued?.()
    else await options.deliver(message)
    return { otpId }
  }

  async function verifyNow(
    input: OtpVerifyInput,
  ): Promise<{ verificationToken: string; claims: VerificationTokenClaims }> {
    if (typeof input.otpCode !== 'string' || !/^[0-9A-Za-z]{6,9}$/.test(input.otpCode))
      throw new CredentialError({
        code: 'OTP_INVALID',
        field: 'otpCode',
        reason: 'must be the 6 to 9 digits (or letters and digits) that were sent',
      })
    const otpCode = normalizeCode(input.otpCode)
    if (input.publicKey !== undefined && !isCompressedP256PublicKey(input.publicKey))
      throw new FieldError({
        field: 'public_key',
        reason: 'must be a compressed P-256 public key in hex (66 chars)',
      })
    const at = now()
    // One transaction reads the record, checks the budgets and records the attempt (before the
    // comparison): concurrent guesses (on any instance) are serialised by the database, and a wrong
    // guess is counted even though the request fails (the error is thrown after the commit).
    const outcome = await storage.transaction(
      async (tx): Promise<{ error: ApiError } | { record: OtpRecord }> => {
        const record = await tx.get(input.otpId)
        // An OTP of another organization is as unknown as a made-up id.
        if (!record || record.organizationId !== input.organizationId)
          return {
            error: new CredentialError({ code: 'OTP_INVALID', field: 'otpId', message: 'unknown otpId' }),
          }
        if (record.status === 'used')
          return {
            error: new CredentialError({
              code: 'OTP_INVALID',
              field: 'otpId',
              message: 'this code was already used; request a new one',
            }),
          }
        if (record.status === 'locked')
          return {
            error: new LimitError({
              code: 'OTP_ATTEMPTS_EXCEEDED',
              field: 'otpId',
              message: 'too many wrong codes; request a new one',
            }),
          }
        if (at >= record.expiresAtMs)
          return {
            error: new CredentialError({
              code: 'OTP_EXPIRED',
              field: 'otpId',
              message: 'this code has expired; request a new one',
            }),
          }
        // A letter in a digits-only code is a typing mistake, not a guess: refused, not counted.
        if (record.alphabet !== 'alphanumeric' && !/^\d+$/.test(otpCode))
          return {
            error: new CredentialError({
              code: 'OTP_INVALID',
              field: 'otpCode',
              reason: 'must be the 6 to 9 digits that were sent',
            }),
          }
        // Wrong guesses are budgeted per contact too, across all its OTPs and organizations; codes
        // sent after a passed CAPTCHA have a budget of their own, which guesses at codes anyone
        // can request without one do not spend.
        const guessKey = guessKeyOf(record.contact, record.captcha === true)
        const wait = await waitFor(tx, guessKey, guessLimits, at)
        if (wait > 0)
          return {
            error: new LimitError({
              code: 'OTP_RATE_LIMITED',
              field: 'otpCode',
              message: 'too many wrong codes for this contact; try again later',
              extra: {
                retryAfterSeconds: wait,
              },
            }),
          }
        // The guess is charged before the code is compared. The bucket was made when the code was
        // sent (`init`), so this charge needs no room; should it need some all the same (a code
        // sent before buckets were kept for codes), a guess the store cannot record (a new bucket
        // refused at `[otp] max_rate_entries`: 429 `maxRateEntries`, the transaction rolled back)
        // is never compared, so a right code is answered as a wrong one is and no guess
        // escapes the code's lock or the contact's budget. (Compared first, a wrong guess was
        // rolled back with its `attempts` while a right one passed: once an attacker had filled
        // the store, guesses were free and 429 against 200 told wrong from right.)
        const charged = await tx.getBucket(guessKey)
        await recordEvent(tx, guessKey, at, guessLimits)
        if (typeof record.codeMac !== 'string' || !sameHex(macOf(record.otpId, otpCode), record.codeMac)) {
          const attempts = record.attempts + 1
          const locked = attempts >= maxAttempts
          await tx.put({ ...record, attempts, status: locked ? 'locked' : 'pending' })
          return {
            error: locked
              ? new LimitError({
                  code: 'OTP_ATTEMPTS_EXCEEDED',
                  field: 'otpCode',
                  message: 'too many wrong codes; request a new one',
                })
              : new CredentialError({
                  code: 'OTP_INVALID',
                  field: 'otpCode',
                  message: 'wrong code',
                  extra: {
                    attemptsRemaining: maxAttempts - attempts,
                  },
                }),
          }
        }
        // Only wrong codes spend the contact's budget: a right one's charge is given back.
        await tx.putBucket(guessKey, charged, windowOf(guessLimits))
        await tx.put({ ...record, status: 'used' })
        return { record }
      },
    )
    if ('error' in outcome) throw outcome.error
    const { record } = outcome
    const lifetime = input.tokenExpirationSeconds ?? defaultTokenExpiration
    const iat = Math.floor(at / 1000)
    const claims: VerificationTokenClaims & { iat: number } = {
      id: newId(),
      verification_type: record.otpType,
      contact: record.contact,
      ...(input.publicKey ? { public_key: input.publicKey } : {}),
      organization_id: record.organizationId,
      exp: iat + lifetime,
      iat,
    }
    return { verificationToken: await options.issueToken(claims), claims }
  }

  const verify = verifyNow

  /**
   * Records that a request for `contact` passed a CAPTCHA; returns the pass its `init` names
   * (`captchaPass`), usable once within two minutes.
   */
  async function grantCaptchaPass(otpType: OtpType, contact: unknown): Promise<string> {
    const normalized = normalizeContact(otpType, contact)
    const pass = newId()
    const at = now()
    await storage.transaction((tx) =>
      tx.putBucket(`captcha-pass:${pass}:${normalized}`, [at], CAPTCHA_PASS_MS),
    )
    return pass
  }

  /** Whether `init` would send a code to `contact` (not refuse its number's country); no budget is spent. */
  async function reaches(otpType: OtpType, contact: string): Promise<boolean> {
    const allowed = options.smsBudget?.allowedCountries
    return otpType !== 'OTP_TYPE_SMS' || allowed === undefined || smsCountryAllowed(contact, allowed)
  }

  return { init, verify, charge, grantCaptchaPass, reaches }
}
