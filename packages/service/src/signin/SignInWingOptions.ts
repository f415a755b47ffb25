import type { RateLimitOptions } from '../pipeline/RateLimitOptions.ts'
import type { CaptchaOptions } from './captcha/CaptchaOptions.ts'
import type { OAuthOptions } from './oauth/OAuthProviderConfig.ts'
import type { SmsBudget } from './otp/createOtpEngine.ts'
import type { OtpStorageCaps } from './otp/otpStorage.ts'

/** What `createService` takes for the sign-in wing. */
export interface SignInWingOptions {
  /**
   * OAuth providers (google, apple, facebook, x, discord) as confidential OpenID Connect clients.
   * @default none: every method uses the dev identity provider
   */
  oauth?: OAuthOptions
  /**
   * A CAPTCHA (Cloudflare Turnstile or hCaptcha) on the auth proxy's `otp_init`: a request whose
   * token passes is not held back by the per-contact send budget.
   * @default none
   */
  captcha?: CaptchaOptions
  /**
   * What SMS codes may cost: how many the service sends an hour, every instance together, and to
   * which countries (`[sms] max_per_hour`, `allowed_countries`). `start` refuses SMS without
   * `maxPerHour`.
   * @default no bound
   */
  smsBudget?: SmsBudget
  /**
   * Most one-time codes and rate-limit entries the service keeps at once (`[otp]
   * max_pending_codes`, `max_rate_entries`): past one, new codes are refused (429) until stale
   * ones are swept. @default 200,000 codes and 1,000,000 entries
   */
  otpCaps?: OtpStorageCaps
}

/**
 * What the sign-in wing is built with and keeps (`signInState(runtime).options`): its own options
 * and the service's budgets, of which the auth proxy's middleware charges `perClientAddress`.
 */
export interface SignInWingConfig extends SignInWingOptions {
  rateLimits?: RateLimitOptions
}
