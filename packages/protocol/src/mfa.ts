import type { Timestamp } from './resources.ts'

/**
 * MFA policies in the published shape (`v1CreateMfaPolicyIntent`, `v1MfaPolicy`, `v1MfaStatus` of
 * @turnkey/http 6.6), plus Latchkey's TOTP factor and recovery codes (docs/mfa.md).
 */

/**
 * How a step may be proven. The published types, proven by the credential that stamps
 * `approve_activity`, and `AUTHENTICATION_TYPE_LATCHKEY_TOTP`, proven by a code sent with
 * `latchkey_satisfy_mfa` (a recovery code stands in for it).
 */
export const AUTHENTICATION_TYPES = [
  'AUTHENTICATION_TYPE_EMAIL_OTP',
  'AUTHENTICATION_TYPE_SMS_OTP',
  'AUTHENTICATION_TYPE_PASSKEY',
  'AUTHENTICATION_TYPE_API_KEY',
  'AUTHENTICATION_TYPE_OAUTH',
  'AUTHENTICATION_TYPE_SESSION',
  'AUTHENTICATION_TYPE_LATCHKEY_TOTP',
] as const
export type AuthenticationType = (typeof AUTHENTICATION_TYPES)[number]

/** One way to prove a step; `id` narrows it to one authenticator, API key or TOTP factor. */
export interface AuthenticationMethod {
  type: AuthenticationType
  id?: string
}

/** One step: any one of its methods proves it. */
export interface RequiredAuthenticationMethod {
  any: AuthenticationMethod[]
}

export interface CreateMfaPolicyParams {
  userId: string
  mfaPolicyName: string
  condition: string
  requiredAuthenticationMethods: RequiredAuthenticationMethod[]
  order: number
  notes?: string
}

export interface UpdateMfaPolicyParams {
  userId: string
  mfaPolicyId: string
  mfaPolicyName?: string
  condition?: string
  requiredAuthenticationMethods?: RequiredAuthenticationMethod[]
  order?: number
  notes?: string
}

export interface MfaPolicy {
  mfaPolicyId: string
  mfaPolicyName: string
  condition: string
  requiredAuthenticationMethods: RequiredAuthenticationMethod[]
  order: number
  notes?: string
  createdAt: Timestamp
  updatedAt: Timestamp
}

export interface MfaStatus {
  mfaPolicyId: string
  userId: string
  satisfied: boolean
  satisfiedMethods: AuthenticationMethod[]
  requiredMethods: RequiredAuthenticationMethod[]
}

/** A second factor of a user (Latchkey): a TOTP authenticator app. */
export interface MfaFactor {
  factorId: string
  factorName: string
  type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP'
  /** False until a first code confirmed the enrolment: an unconfirmed factor proves nothing. */
  confirmed: boolean
  createdAt: Timestamp
}
