import { z } from 'zod'
import { type CaptchaOptions, SITEVERIFY_URLS } from '../../signin/captcha/CaptchaOptions.ts'

/**
 * `[captcha]`: an optional CAPTCHA on the auth proxy's `otp_init`. A request whose token passes
 * the provider's server-side check is not held back by the per-contact send budget, so someone
 * who knows an address cannot keep its owner from getting a code. Absent: no CAPTCHA.
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
  }
}
