import { getCountries } from 'libphonenumber-js/min'
import { z } from 'zod'
import type { SmsOptions } from '../../delivery/DeliveryOptions.ts'
import { checkTemplate, TemplateError } from '../../delivery/renderDeliveryTemplate.ts'
import type { SmsBudget } from '../../signin/otp/createOtpEngine.ts'

const template = z
  .string()
  .min(1)
  .max(1600)
  .superRefine((text, context) => {
    try {
      checkTemplate('sms.template', text)
    } catch (error) {
      if (!(error instanceof TemplateError)) throw error
      context.addIssue({ code: 'custom', message: error.message })
    }
  })
  .optional()
  .describe(
    'Text with {{code}}, {{app_name}}, {{expires_minutes}}. Default: the auth proxy settings’ SMS template.',
  )

const COUNTRIES: readonly string[] = getCountries()

/** A count of SMS codes in a clock hour. */
const codesAnHour = () => z.number().int().min(1).max(1_000_000).optional()

// What SMS codes may cost the operator: every code is a paid message to a number the caller
// chooses, so a pumping attack (codes asked for premium-rate numbers, each a different one) is
// bounded only service-wide.
const budget = {
  max_per_hour: codesAnHour().describe(
    'SMS codes the service sends in one clock hour, every instance and organization together (sign-in, verification and MFA codes); over it, 429 OTP_RATE_LIMITED until the next hour. `start` requires it: the numbers are chosen by callers.',
  ),
  max_per_hour_new_numbers: codesAnHour().describe(
    'Of max_per_hour, how many codes may go to numbers no user holds verified (sign-ups, new numbers); over it, 429 OTP_RATE_LIMITED with limit smsPerHourNewNumbers until the next hour. A pumping attack chooses its own numbers, so it spends only this share, and the rest stays for the sign-ins and MFA codes of users whose numbers the service knows. At most max_per_hour. Default: half of max_per_hour, rounded up.',
  ),
  allowed_countries: z
    .array(
      z.string().refine((code) => COUNTRIES.includes(code), {
        error: 'sms.allowed_countries lists ISO 3166-1 alpha-2 codes such as "US" or "GB"',
      }),
    )
    .min(1)
    .optional()
    .describe(
      'Countries (ISO 3166-1 alpha-2, e.g. ["US", "CA", "GB"]) whose numbers get SMS codes; any other number is refused with 400 CONTACT_INVALID naming the contact. Default: every country.',
    ),
}

const httpUrl = (what: string) => z.url({ protocol: /^https?$/, error: `${what} must be an http(s) URL` })

const twilio = z
  .object({
    provider: z.literal('twilio').describe("Twilio's Messages API."),
    account_sid: z
      .string()
      .regex(/^AC[0-9a-zA-Z]+$/, 'a Twilio account SID starts with AC')
      .describe('Account SID.'),
    auth_token: z
      .string()
      .min(1)
      .meta({ secret: true })
      .describe('Auth token (secret: also `auth_token_file` or an env var).'),
    from: z.string().min(1).describe('Sending number (E.164) or sender id.'),
    base_url: httpUrl('sms.base_url').optional().describe("API base URL. Default: 'https://api.twilio.com'."),
    template,
    ...budget,
  })
  .strict()

const webhook = z
  .object({
    provider: z.literal('webhook').describe('A signed HTTPS webhook in front of any SMS gateway.'),
    url: httpUrl('sms.url').describe('Receives a JSON POST { id, to, body }.'),
    secret: z
      .string()
      .min(16)
      .meta({ secret: true })
      .describe(
        'HMAC-SHA256 key: X-Latchkey-Signature is sha256=hex(HMAC(secret, timestamp + "." + body)), the timestamp being X-Latchkey-Timestamp (secret: also `secret_file` or an env var).',
      ),
    template,
    ...budget,
  })
  .strict()

/** `[sms]`: one-time codes by SMS through an HTTP provider. Absent: SMS codes go to the dev outbox. */
export const smsSection = z
  .discriminatedUnion('provider', [twilio, webhook])
  .superRefine((section, context) => {
    if (
      section.max_per_hour_new_numbers !== undefined &&
      (section.max_per_hour === undefined || section.max_per_hour_new_numbers > section.max_per_hour)
    )
      context.addIssue({
        code: 'custom',
        path: ['max_per_hour_new_numbers'],
        message: `is a share of sms.max_per_hour, so at most ${section.max_per_hour ?? 'it, and it is not set'}`,
      })
  })
  .describe("SMS delivery of one-time codes: provider 'twilio' or 'webhook'.")

export type SmsSection = z.infer<typeof smsSection>

/** The parsed `[sms]` section as `CreateServiceOptions.delivery.sms`. */
export function smsOptions(parsed: SmsSection): SmsOptions {
  const template = parsed.template !== undefined ? { template: parsed.template } : {}
  if (parsed.provider === 'twilio')
    return {
      provider: 'twilio',
      accountSid: parsed.account_sid,
      authToken: parsed.auth_token,
      from: parsed.from,
      ...(parsed.base_url !== undefined ? { baseUrl: parsed.base_url } : {}),
      ...template,
    }
  return { provider: 'webhook', url: parsed.url, secret: parsed.secret, ...template }
}

/** The parsed `[sms]` section's bound on what SMS codes may cost, as `CreateServiceOptions.smsBudget`. */
export function smsBudgetOptions(parsed: SmsSection): SmsBudget {
  return {
    ...(parsed.max_per_hour !== undefined ? { maxPerHour: parsed.max_per_hour } : {}),
    ...(parsed.max_per_hour_new_numbers !== undefined
      ? { maxPerHourNewNumbers: parsed.max_per_hour_new_numbers }
      : {}),
    ...(parsed.allowed_countries !== undefined ? { allowedCountries: parsed.allowed_countries } : {}),
  }
}
