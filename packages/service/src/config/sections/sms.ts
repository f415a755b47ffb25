import { z } from 'zod'
import type { SmsOptions } from '../../delivery/DeliveryOptions.ts'
import { checkTemplate, TemplateError } from '../../delivery/renderDeliveryTemplate.ts'

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
  })
  .strict()

/** `[sms]`: one-time codes by SMS through an HTTP provider. Absent: SMS codes go to the dev outbox. */
export const smsSection = z
  .discriminatedUnion('provider', [twilio, webhook])
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
