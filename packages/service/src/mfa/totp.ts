import { hmac } from '@noble/hashes/hmac.js'
import { sha1 } from '@noble/hashes/legacy.js'
import { sha256, sha512 } from '@noble/hashes/sha2.js'
import { base32nopad } from '@scure/base'

/**
 * TOTP (RFC 6238) over HOTP (RFC 4226), on @noble/hashes' HMAC: a time step is
 * `floor(unix seconds / period)`, its code the HOTP of that counter (dynamic truncation, `digits`
 * decimal digits). Authenticator apps use SHA-1, 30-second steps and 6 digits, which the wing
 * enrols; SHA-256 and SHA-512 are here for RFC 6238's appendix B vectors (totp.test.ts).
 */

export type TotpAlgorithm = 'SHA1' | 'SHA256' | 'SHA512'

export interface TotpParameters {
  algorithm: TotpAlgorithm
  digits: number
  /** Seconds per step. */
  period: number
}

export const TOTP_DEFAULTS: TotpParameters = { algorithm: 'SHA1', digits: 6, period: 30 }

const HASHES = { SHA1: sha1, SHA256: sha256, SHA512: sha512 } as const

/** The HOTP value of `counter` under `secret` (RFC 4226 §5.3), as `digits` decimal digits. */
export function hotp(
  secret: Uint8Array,
  counter: number,
  parameters: TotpParameters = TOTP_DEFAULTS,
): string {
  const message = new Uint8Array(8)
  new DataView(message.buffer).setBigUint64(0, BigInt(counter))
  const mac = hmac(HASHES[parameters.algorithm], secret, message)
  const offset = mac[mac.length - 1]! & 0x0f
  const binary =
    ((mac[offset]! & 0x7f) << 24) | (mac[offset + 1]! << 16) | (mac[offset + 2]! << 8) | mac[offset + 3]!
  return String(binary % 10 ** parameters.digits).padStart(parameters.digits, '0')
}

/** The time step of `nowMs`. */
export const totpStep = (nowMs: number, parameters: TotpParameters = TOTP_DEFAULTS): number =>
  Math.floor(nowMs / 1000 / parameters.period)

/** The TOTP code at `nowMs`. */
export const totp = (secret: Uint8Array, nowMs: number, parameters: TotpParameters = TOTP_DEFAULTS): string =>
  hotp(secret, totpStep(nowMs, parameters), parameters)

/**
 * The step whose code `code` is, within one step either side of now, and later than `lastStep`
 * (the last step this factor accepted: a code is never accepted twice, nor one older than an
 * accepted one); undefined when none. Every candidate is computed and compared in constant time.
 */
export function matchTotp(
  secret: Uint8Array,
  code: string,
  {
    nowMs,
    lastStep,
    parameters = TOTP_DEFAULTS,
  }: { nowMs: number; lastStep: number; parameters?: TotpParameters },
): number | undefined {
  const now = totpStep(nowMs, parameters)
  let matched: number | undefined
  for (const step of [now - 1, now, now + 1]) {
    const candidate = hotp(secret, step, parameters)
    if (constantTimeEqual(candidate, code) && step > lastStep && matched === undefined) matched = step
  }
  return matched
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return difference === 0
}

/** A secret as authenticator apps take it: RFC 4648 base32 without padding. */
export const encodeSecret = (secret: Uint8Array): string => base32nopad.encode(secret)

/**
 * The `otpauth://totp/` URI (Google Authenticator's key URI format) that a QR code carries: label
 * `issuer:account`, the secret, and the parameters every common app reads.
 */
export function otpauthUri({
  secret,
  issuer,
  account,
  parameters = TOTP_DEFAULTS,
}: {
  secret: Uint8Array
  issuer: string
  account: string
  parameters?: TotpParameters
}): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`
  const query = new URLSearchParams({
    secret: encodeSecret(secret),
    issuer,
    algorithm: parameters.algorithm,
    digits: String(parameters.digits),
    period: String(parameters.period),
  })
  return `otpauth://totp/${label}?${query.toString()}`
}
