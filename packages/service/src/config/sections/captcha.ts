import { z } from 'zod'
import { type CaptchaOptions, SITEVERIFY_URLS } from '../../signin/captcha/CaptchaOptions.ts'

/**
 * `[captcha]`: an optional CAPTCHA on the auth proxy's `otp_init`. A request whose token passes
 * the provider's server-side check is not held back by the per-contact send budget, so someone
 * who knows an address cannot keep its owner from getting a code; it is held to the contact's
 * CAPTCHA ceiling instead (`per_contact_codes` per `per_contact_window_minutes`). Absent: no CAPTCHA.
 */
export const captchaSection = z
  .object({
    provider: z.enum(['turnstile', 'hcaptcha']).describe("'turnstile' (Cloudflare Turnstile) or 'hcaptcha'."),
    site_key: z
      .string()
      .min(1)
      .max(200)
      .describe('The widget’s public site key, sent to kits in wallet_kit_config.'),
    secret: z
      .string()
      .min(1)
      .max(500)
      .meta({ secret: true })
      .describe('The server-side secret sent to siteverify (secret: also `secret_file` or an env var).'),
    verify_url: z
      .url({ protocol: /^https?$/, error: 'captcha.verify_url must be an http(s) URL' })
      .optional()
      .describe(
        `The siteverify endpoint. Default: '${SITEVERIFY_URLS.turnstile}' for Turnstile, '${SITEVERIFY_URLS.hcaptcha}' for hCaptcha.`,
      ),
    timeout_ms: z
      .number()
      .int()
      .min(100)
      .max(30_000)
      .optional()
      .describe('How long to wait for siteverify; a timeout counts as not passed. Default: 5000.'),
    per_contact_codes: z
      .int({ error: 'must be a whole number of codes from 1 to 100' })
      .min(1, { error: 'must be a whole number of codes from 1 to 100' })
      .max(100, { error: 'must be a whole number of codes from 1 to 100' })
      .default(10)
      .describe(
        'Codes one e-mail address or phone number may be sent with a solved CAPTCHA per `per_contact_window_minutes`, across every instance (a solving service buys no more).',
      ),
    per_contact_window_minutes: z
      .int({ error: 'must be a whole number of minutes from 1 to 60' })
      .min(1, { error: 'must be a whole number of minutes from 1 to 60' })
      .max(60, { error: 'must be a whole number of minutes from 1 to 60' })
      .default(10)
      .describe('The window of `per_contact_codes`, in minutes.'),
  })
  .strict()
  .describe('CAPTCHA on otp_init (Cloudflare Turnstile or hCaptcha).')

export type CaptchaSection = z.infer<typeof captchaSection>

/** The parsed `[captcha]` section as `CreateServiceOptions.captcha`. */
export function captchaOptions(parsed: CaptchaSection): CaptchaOptions {
  return {
    provider: parsed.provider,
    siteKey: parsed.site_key,
    secret: parsed.secret,
    ...(parsed.verify_url !== undefined ? { verifyUrl: parsed.verify_url } : {}),
    ...(parsed.timeout_ms !== undefined ? { timeoutMs: parsed.timeout_ms } : {}),
    perContact: { codes: parsed.per_contact_codes, windowMinutes: parsed.per_contact_window_minutes },
  }
}
