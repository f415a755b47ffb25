import { hmac } from '@noble/hashes/hmac.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { PluginStateKey, type Runtime } from '../kernel/Runtime.ts'

/** What `createService` takes for the MFA wing: `mfa`, given to `mfaWing(options.mfa)`. */
export interface MfaWingOptions {
  /** TOTP's issuer and the per-user budget of code attempts. */
  mfa?: MfaOptions
}

export interface MfaOptions {
  totp?: {
    /**
     * The issuer authenticator apps show beside the account (`otpauth://totp/<issuer>:<account>`).
     * @default 'Latchkey'
     */
    issuer?: string
    /**
     * Codes (TOTP or recovery) a user may try per `attemptWindowMs`, on every instance together
     * (the store's rate-limit buckets); a burst of that many, then one per window / attempts.
     * @default 5
     */
    maxAttempts?: number
    /** @default 300_000 (5 minutes) */
    attemptWindowMs?: number
  }
}

export interface MfaState {
  issuer: string
  maxAttempts: number
  attemptWindowMs: number
  /** Keyed hash of a recovery code (HMAC-SHA256 under the wing's own key, sealed at rest). */
  recoveryHash(userId: string, code: string): string
}

export const MFA = new PluginStateKey<MfaState>('mfa')

/** The `pluginRows` row holding the recovery-code key, sealed under the master key. */
export const RECOVERY_KEY_ROW = 'mfa.recoveryCodeKey'

export function mfaStateOf(options: MfaOptions, key: Uint8Array): MfaState {
  const issuer = options.totp?.issuer ?? 'Latchkey'
  const maxAttempts = options.totp?.maxAttempts ?? 5
  const attemptWindowMs = options.totp?.attemptWindowMs ?? 300_000
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1)
    throw new Error(`mfa.totp.maxAttempts must be a positive integer, got ${maxAttempts}`)
  if (!(attemptWindowMs >= 1000))
    throw new Error(`mfa.totp.attemptWindowMs must be at least 1000, got ${attemptWindowMs}`)
  if (issuer.length === 0 || issuer.length > 64 || issuer.includes(':'))
    throw new Error('mfa.totp.issuer must be 1 to 64 characters without a colon')
  return {
    issuer,
    maxAttempts,
    attemptWindowMs,
    recoveryHash: (userId, code) =>
      bytesToHex(hmac(sha256, key, utf8ToBytes(`${userId}\n${normalizeRecoveryCode(code)}`))),
  }
}

/** Recovery codes are compared without case, spaces or dashes (as people type them back). */
export const normalizeRecoveryCode = (code: string): string => code.toUpperCase().replace(/[\s-]/g, '')

export const mfaState = (runtime: Runtime): MfaState => runtime.stateOf(MFA)

/**
 * Charges one code attempt of `userId` against the shared budget (one upsert, autocommitted: call
 * it outside any transaction); false when the budget is spent.
 */
export async function chargeAttempt(runtime: Runtime, userId: string): Promise<boolean> {
  const { maxAttempts, attemptWindowMs } = mfaState(runtime)
  const intervalMs = attemptWindowMs / maxAttempts
  const [bucket] = await runtime.store.chargeBuckets(
    [{ key: `mfa:${userId}`, intervalMs, toleranceMs: attemptWindowMs - intervalMs }],
    runtime.now(),
  )
  return Boolean(bucket?.allowed)
}
