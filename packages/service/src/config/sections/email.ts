import { z } from 'zod'
import type { EmailOptions } from '../../delivery/DeliveryOptions.ts'
import { checkTemplate, TemplateError } from '../../delivery/renderDeliveryTemplate.ts'

/** A template whose placeholders are checked (an unknown one is an issue naming it). */
const template = (what: string) =>
  z
    .string()
    .min(1)
    .max(20_000)
    .superRefine((text, context) => {
      try {
        checkTemplate(what, text)
      } catch (error) {
        if (!(error instanceof TemplateError)) throw error
        context.addIssue({ code: 'custom', message: error.message })
      }
    })

/** `[email]`: one-time codes by e-mail over SMTP. Absent: e-mail codes go to the dev outbox. */
export const emailSection = z
  .object({
    host: z.string().min(1).describe('SMTP server host name or address.'),
    port: z.number().int().min(1).max(65_535).default(587).describe('SMTP server port.'),
    tls: z
      .enum(['tls', 'starttls', 'none'])
      .default('starttls')
      .describe(
        "'tls': TLS from the first byte (port 465); 'starttls': upgrade required (port 587); 'none': plain (a local relay only).",
      ),
    user: z.string().min(1).optional().describe('SMTP AUTH user name; none: no authentication.'),
    password: z
      .string()
      .min(1)
      .meta({ secret: true })
      .optional()
      .describe('SMTP AUTH password (secret: also `password_file` or an env var).'),
    from: z
      .string()
      .min(3)
      .max(320)
      .describe('Sender, `codes@example.com` or `Example <codes@example.com>`.'),
    templates: z
      .object({
        subject: template('email.templates.subject').optional().describe('Subject line.'),
        text: template('email.templates.text').optional().describe('Plain-text body.'),
        html: template('email.templates.html').optional().describe('HTML body (values are escaped).'),
      })
      .strict()
      .optional()
      .describe(
        'Message templates with {{code}}, {{app_name}}, {{expires_minutes}}. Default: the auth proxy settings’ e-mail template, text only.',
      ),
  })
  .strict()
  .superRefine((section, context) => {
    if (section.user !== undefined && section.password === undefined)
      context.addIssue({
        code: 'custom',
        path: ['password'],
        message: 'email.user is set: email.password is required',
      })
  })
  .describe('E-mail delivery of one-time codes over SMTP.')

export type EmailSection = z.infer<typeof emailSection>

/** The parsed `[email]` section as `CreateServiceOptions.delivery.email`. */
export function emailOptions(parsed: EmailSection): EmailOptions {
  return {
    host: parsed.host,
    port: parsed.port,
    tls: parsed.tls,
    ...(parsed.user !== undefined ? { user: parsed.user } : {}),
    ...(parsed.password !== undefined ? { password: parsed.password } : {}),
    from: parsed.from,
    ...(parsed.templates
      ? {
          templates: {
            ...(parsed.templates.subject !== undefined ? { subject: parsed.templates.subject } : {}),
            ...(parsed.templates.text !== undefined ? { text: parsed.templates.text } : {}),
            ...(parsed.templates.html !== undefined ? { html: parsed.templates.html } : {}),
          },
        }
      : {}),
  }
}
