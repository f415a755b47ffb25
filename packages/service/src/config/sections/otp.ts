import { z } from 'zod'
import type { OtpStorageCaps } from '../../signin/otp/otpStorage.ts'

const cap = (what: string, fallback: string) =>
  z
    .int({ error: 'must be a whole number from 1000 to 100000000' })
    .min(1000, { error: 'must be a whole number from 1000 to 100000000' })
    .max(100_000_000, { error: 'must be a whole number from 1000 to 100000000' })
    .optional()
    .describe(`${what} Default: ${fallback}.`)

/** `[otp]`: how much the service keeps of one-time codes and their budgets, every instance together. */
export const otpSection = z
  .strictObject({
    max_pending_codes: cap(
      'One-time codes (sign-in, verification and MFA codes) the service keeps at once, every organization together; a code is kept until 10 minutes after it expires. Past it, a new code is refused with 429 and retryAfterSeconds until stale ones are swept. A bound on storage, not a budget: the budgets of `otp_init` per network (an IPv6 /64, /56 and /48) keep one network from filling it (docs/security.md, "Shared budgets").',
      '200000',
    ),
    max_rate_entries: cap(
      "Rate-limit entries of one-time codes (for each contact its codes sent and its guesses, and one per client network and sub-organization with recent codes) the service keeps at once; an entry is kept while its window counts it (10 minutes for a contact's codes, an hour for a network), and a contact's guess entry, made when a code is sent, at least as long as that code can be verified. Past it, a new entry is refused with 429, retryAfterSeconds and `limit: \"maxRateEntries\"`: a code that would need one is not sent, while codes already sent are still verified (each guess counted in its contact's entry before the code is compared).",
      '1000000',
    ),
  })
  .describe('What the service keeps of one-time codes; the defaults suit most deployments.')

export type OtpSection = z.infer<typeof otpSection>

/** The parsed `[otp]` section as `CreateServiceOptions`' `otpCaps` (none when it sets nothing). */
export function otpCapsOptions(parsed: OtpSection): { otpCaps?: OtpStorageCaps } {
  const caps: OtpStorageCaps = {
    ...(parsed.max_pending_codes !== undefined ? { maxPendingCodes: parsed.max_pending_codes } : {}),
    ...(parsed.max_rate_entries !== undefined ? { maxRateEntries: parsed.max_rate_entries } : {}),
  }
  return Object.keys(caps).length > 0 ? { otpCaps: caps } : {}
}
