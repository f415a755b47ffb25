import { ServiceError } from '../kernel/base/errors.ts'
import type { EventSink } from '../kernel/base/events.ts'
import { isEmailAddress } from '../kernel/emailAddress.ts'
import { JobError, type JobHandler, PermanentJobError } from '../kernel/JobQueue.ts'
import type { OtpChannels, OtpDeliveryPayload } from '../kernel/otpDelivery.ts'
import type { DeliveryOptions, EmailTemplates, Mailer } from './DeliveryOptions.ts'
import { checkTemplate, type DeliveryValues, renderDeliveryTemplate } from './renderDeliveryTemplate.ts'
import { ProviderError, type SmsSender, smsSender } from './smsSender.ts'

/** A delivery configuration that cannot work; the message names the field. */
export class DeliveryConfigError extends ServiceError {
  override name = 'DeliveryConfigError'
}

export type DeliveryChannel = 'email' | 'sms'
export type DeliveryProvider = 'smtp' | 'twilio' | 'webhook'

/** The compiled delivery: which channels it sends, and the job handler that sends. */
export interface Delivery extends OtpChannels {
  /** Runs `OTP_DELIVERY_JOB` jobs. */
  handler: JobHandler<OtpDeliveryPayload>
  /** Closes the SMTP transport. */
  close(): void
}

export interface DeliveryHost {
  events: EventSink
  now(): number
  fetch: typeof fetch
}

const DEFAULT_TIMEOUT_MS = 15_000
const DEFAULT_ATTEMPTS = 5

/** Socket-level SMTP failures: the server was not reached or dropped the connection. */
const SMTP_CONNECTION = ['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ETLS', 'ECONNREFUSED', 'ECONNRESET']

type Failure = { reason: string; permanent: boolean; uncertain?: boolean }

/**
 * SMTP's answer decides: 4xx is temporary (retried), 5xx is a refusal (final, as SMTP means it), a
 * connection failure is retried. A connection lost after the message was handed over (`DATA`)
 * leaves its fate unknown: final, since e-mail has no idempotency key (at most once).
 */
function smtpFailure(error: unknown): Failure {
  const e = error as { responseCode?: unknown; code?: unknown; command?: unknown } | null
  const status = typeof e?.responseCode === 'number' ? e.responseCode : undefined
  if (status !== undefined && status >= 500) return { reason: 'smtp_5xx', permanent: true }
  if (status !== undefined && status >= 400) return { reason: 'smtp_4xx', permanent: false }
  if (e?.code === 'EAUTH') return { reason: 'smtp_auth', permanent: true }
  // Refused before any byte went out (no recipient, or one the mailer will not send to).
  if (e?.code === 'EENVELOPE') return { reason: 'smtp_envelope', permanent: true }
  if (e?.command === 'DATA') return { reason: 'smtp_uncertain', permanent: true, uncertain: true }
  if (typeof e?.code === 'string' && SMTP_CONNECTION.includes(e.code))
    return { reason: 'smtp_connection', permanent: false }
  return { reason: 'smtp_error', permanent: false }
}

/** An HTTP provider's answer: 429 and 5xx are retried, other 4xx are final, no answer is retried. */
function providerFailure(provider: DeliveryProvider, error: unknown): Failure {
  if (error instanceof ProviderError) {
    const { status } = error
    if (status === 429) return { reason: `${provider}_429`, permanent: false }
    if (status >= 500) return { reason: `${provider}_5xx`, permanent: false }
    return { reason: `${provider}_4xx`, permanent: true }
  }
  return { reason: `${provider}_connection`, permanent: false }
}

/**
 * Refuses a delivery configuration that cannot work, before the service opens anything: an
 * unknown template placeholder (`TemplateError` naming it), e-mail without a mailer.
 */
export function checkDeliveryOptions(options: DeliveryOptions): void {
  for (const [name, template] of Object.entries(options.email?.templates ?? {}))
    if (template !== undefined) checkTemplate(`email.templates.${name}`, template)
  if (options.sms?.template !== undefined) checkTemplate('sms.template', options.sms.template)
  if (options.email && !options.mailer)
    throw new DeliveryConfigError(
      'delivery.email needs a mailer: pass smtpMailer from @latchkey/service/node as delivery.mailer',
    )
}

/**
 * Compiles `options` (templates checked: an unknown placeholder throws `TemplateError` naming it)
 * into the handler of delivery jobs. At most once per code: a run told its last try may have sent
 * (`uncertain`) sends again only where the provider takes an idempotency key (SMS: the job's id);
 * e-mail is then given up and counted (`delivery.uncertain`). Failures are emitted with a bounded
 * reason, never the code or the contact.
 */
export function createDelivery(options: DeliveryOptions, host: DeliveryHost): Delivery {
  checkDeliveryOptions(options)
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const templates: EmailTemplates = options.email?.templates ?? {}
  let mailer: Mailer | undefined
  const mailerOf = () => {
    mailer ??= options.mailer!({ ...options.email!, timeoutMs })
    return mailer
  }
  const sms: SmsSender | undefined = options.sms
    ? smsSender(options.sms, host.fetch, () => host.now())
    : undefined
  const emit: EventSink['emit'] = (name, data) => {
    try {
      host.events.emit(name, data)
    } catch {
      // Observability never fails a delivery.
    }
  }

  const handler: JobHandler<OtpDeliveryPayload> = {
    timeoutMs: timeoutMs + 1000,
    maxAttempts: options.maxAttempts ?? DEFAULT_ATTEMPTS,
    async run(payload, context) {
      const email = payload.otpType === 'OTP_TYPE_EMAIL'
      const channel: DeliveryChannel = email ? 'email' : 'sms'
      const provider: DeliveryProvider = email ? 'smtp' : sms ? sms.provider : 'webhook'
      if (email ? !options.email : !sms)
        // The configuration changed since the code was committed: nothing can send it.
        throw new PermanentJobError(`${channel}_not_configured`)
      if (context.uncertain) {
        emit('delivery.uncertain', { channel, provider, resent: !email })
        if (email) throw new PermanentJobError('smtp_uncertain')
      }
      if (email && !isEmailAddress(payload.to)) {
        // A code committed for a contact that is not one plain address (before the sign-in wing
        // refused them): a mailer could read it as a list, sending to an inbox nothing budgeted.
        emit('delivery.failed', { channel, provider, reason: 'smtp_recipient', attempt: context.attempt })
        throw new PermanentJobError('smtp_recipient')
      }
      const values: DeliveryValues = {
        code: payload.code,
        app_name: payload.appName,
        expires_minutes: String(payload.expiresInMinutes),
      }
      try {
        if (email) {
          const { subject, text, html } = templates
          await mailerOf().send(
            {
              from: options.email!.from,
              to: payload.to,
              subject: subject !== undefined ? renderDeliveryTemplate(subject, values) : payload.subject,
              text: text !== undefined ? renderDeliveryTemplate(text, values) : payload.body,
              ...(html !== undefined ? { html: renderDeliveryTemplate(html, values, true) } : {}),
              messageId: `<${context.jobId}@latchkey.delivery>`,
            },
            context.signal,
          )
        } else {
          const template = options.sms!.template
          await sms!.send(
            {
              id: context.jobId,
              to: payload.to,
              body: template !== undefined ? renderDeliveryTemplate(template, values) : payload.body,
            },
            context.signal,
          )
        }
      } catch (error) {
        const failure = context.signal.aborted
          ? { reason: `${provider}_timeout`, permanent: false }
          : email
            ? smtpFailure(error)
            : providerFailure(provider, error)
        emit('delivery.failed', { channel, provider, reason: failure.reason, attempt: context.attempt })
        if ('uncertain' in failure) emit('delivery.uncertain', { channel, provider, resent: false })
        throw failure.permanent ? new PermanentJobError(failure.reason) : new JobError(failure.reason)
      }
      emit('delivery.sent', { channel, provider, attempt: context.attempt })
    },
  }
  return {
    handles: (otpType) => (otpType === 'OTP_TYPE_EMAIL' ? options.email !== undefined : sms !== undefined),
    handler,
    close: () => mailer?.close(),
  }
}
