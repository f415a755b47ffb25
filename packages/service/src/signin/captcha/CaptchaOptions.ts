/** The two CAPTCHA services whose server-side check the auth proxy runs on `otp_init`. */
export type CaptchaProvider = 'turnstile' | 'hcaptcha'

/** Each provider's siteverify endpoint. */
export const SITEVERIFY_URLS: Record<CaptchaProvider, string> = {
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
  hcaptcha: 'https://api.hcaptcha.com/siteverify',
}

/**
 * An optional CAPTCHA on the auth proxy's `otp_init` (`createService({ captcha })`). A request
 * whose token (`X-Captcha-Token`, the published clients' `captchaToken`) passes is not held back
 * by the per-contact send budget, only by the contact's CAPTCHA ceiling (`perContact`); one
 * without a token, or whose token fails, is budgeted as usual.
 */
export interface CaptchaOptions {
  provider: CaptchaProvider
  /** The widget's public site key, handed to kits by `wallet_kit_config` and `wallet_kit_client_params`. */
  siteKey: string
  /** The server-side secret sent to siteverify. */
  secret: string
  /** @default the provider's siteverify endpoint (`SITEVERIFY_URLS`) */
  verifyUrl?: string
  /** How long to wait for siteverify; a timeout counts as not passed. @default 5000 */
  timeoutMs?: number
  /**
   * Codes one contact may be sent with passed CAPTCHAs within `windowMinutes` (at most 60),
   * service-wide: a solving service buys no more than this. @default { codes: 10, windowMinutes: 10 }
   */
  perContact?: { codes: number; windowMinutes: number }
}
