import type { OtpType } from '@latchkey/protocol'
import { parsePhoneNumberFromString } from 'libphonenumber-js/min'
import { FieldError } from '../../kernel/base/errors.ts'
import { EMAIL_ADDRESS_HINT, isEmailAddress } from '../../kernel/emailAddress.ts'

const E164 = /^\+[1-9]\d{6,14}$/

/** True when `value` is an E.164 phone number whose length fits its country's numbering plan. */
export function isE164PhoneNumber(value: string): boolean {
  if (!E164.test(value)) return false
  const parsed = parsePhoneNumberFromString(value)
  return parsed?.isPossible() === true && parsed.number === value
}

/**
 * Checks a contact against its OTP type and returns its canonical form (e-mail lower-cased
 * and trimmed, and a plain address: `kernel/emailAddress.ts`; phone numbers must already be
 * E.164). Throws `CONTACT_INVALID` naming `field` otherwise.
 */
export function normalizeContact(otpType: OtpType, contact: unknown, field = 'contact'): string {
  if (typeof contact !== 'string' || contact.trim() === '')
    throw new FieldError({ code: 'CONTACT_INVALID', field, reason: 'must be a non-empty string' })
  const trimmed = contact.trim()
  if (otpType === 'OTP_TYPE_EMAIL') {
    const email = trimmed.toLowerCase()
    if (!isEmailAddress(email))
      throw new FieldError({ code: 'CONTACT_INVALID', field, reason: `must be ${EMAIL_ADDRESS_HINT}` })
    return email
  }
  if (!isE164PhoneNumber(trimmed))
    throw new FieldError({
      code: 'CONTACT_INVALID',
      field,
      reason: 'is not a valid phone number in E.164 form (e.g. +14155550123)',
    })
  return trimmed
}

/**
 * The mailbox a canonical contact reaches, as the per-contact send budgets count it: an e-mail
 * address without its `+tag` (most providers deliver `ada+1@…` to `ada@…`), with its domain in
 * ASCII (a full-width or otherwise IDNA-mapped spelling of the same domain), and for Gmail without
 * the dots of its local part and at gmail.com (`a.da@googlemail.com` is `ada@gmail.com`); a phone number as it
 * is. So spelling one inbox many ways does not buy it more codes. Only the budget reads it: the
 * code still goes to, and is verified for, the contact as given.
 */
export function mailboxOf(contact: string): string {
  const at = contact.lastIndexOf('@')
  if (at < 0) return contact
  const local = contact.slice(0, at)
  const domain = contact.slice(at + 1)
  const plus = local.indexOf('+')
  const base = plus > 0 ? local.slice(0, plus) : local
  const ascii = asciiDomain(domain)
  // Gmail ignores dots in the local part, and googlemail.com is the same mailboxes.
  if (GMAIL_DOMAINS.has(ascii)) return `${base.replaceAll('.', '')}@gmail.com`
  return `${base}@${ascii}`
}

/** Domains whose mailboxes ignore dots in the local part: Gmail's two names for the same ones. */
const GMAIL_DOMAINS = new Set(['gmail.com', 'googlemail.com'])

/** A domain as the WHATWG URL parser writes it (IDNA: lower-case ASCII, punycode); else as it is. */
function asciiDomain(domain: string): string {
  try {
    return new URL(`http://${domain}`).hostname || domain
  } catch {
    return domain
  }
}
