import type { OtpType } from '@latchkey/protocol'
import { PluginStateKey } from './Runtime.ts'

/**
 * One-time codes to a user's contact, as other wings use them: the sign-in wing (which owns the
 * OTP engine, its budgets and its delivery) publishes this, the MFA wing sends and checks codes
 * for its e-mail and SMS factors through it, and neither imports the other.
 */
export interface ContactCodes {
  /**
   * Sends a fresh code to `contact`, a contact of user `userId` of `organizationId` who asks it for
   * themself, with the operator's OTP settings (length, lifetime, app name, templates), the
   * engine's per-contact send budget and, in a sub-organization, that user's own budget of codes
   * (not the one its other users share); commits on its own (call it outside a transaction).
   * Answers the code's id, never the code.
   */
  send(input: {
    organizationId: string
    userId: string
    otpType: OtpType
    contact: string
  }): Promise<{ otpId: string }>
  /**
   * Checks `code` against the code `otpId` of `organizationId` and spends it (once: concurrent
   * checks, on any instance, let one through), charging the engine's guess budget; commits on its
   * own. Answers what the code was sent to; throws `OTP_INVALID` (field `otpCode`) otherwise.
   */
  check(input: {
    organizationId: string
    otpId: string
    code: string
  }): Promise<{ otpType: OtpType; contact: string }>
  /**
   * Whether a code can be sent to `contact` at all under the operator's delivery rules (an SMS
   * code only to `[sms] allowed_countries`); spends nothing. A contact it cannot reach proves no
   * MFA step.
   */
  reaches(input: { otpType: OtpType; contact: string }): Promise<boolean>
}

/** Where the runtime keeps the published `ContactCodes` (absent without the sign-in wing). */
export const CONTACT_CODES = new PluginStateKey<ContactCodes>('contact-codes')
