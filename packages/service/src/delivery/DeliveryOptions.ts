/**
 * How one-time codes reach people outside the dev outbox: e-mail over SMTP and SMS through an HTTP
 * provider. A channel with a provider here is delivered durably (a job committed with the code,
 * sent by one instance after the commit, retried with backoff); a channel without one goes to the
 * dev outbox as before.
 */
export interface DeliveryOptions {
  email?: EmailOptions
  sms?: SmsOptions
  /**
   * Opens SMTP connections for `email`: in Node, `smtpMailer` from `@latchkey/service/node` (the
   * main entry also runs in browsers, where there is no SMTP).
   * @default none: `email` without it is a configuration error
   */
  mailer?: MailerFactory
  /** Runs of one message before it fails for good. @default 5 */
  maxAttempts?: number
  /** Longest one send may take. @default 15000 */
  timeoutMs?: number
}

/** How the SMTP connection is secured. */
export type SmtpTlsMode =
  /** TLS from the first byte (usually port 465). */
  | 'tls'
  /** Plain connection upgraded with STARTTLS, which is then required (usually port 587). */
  | 'starttls'
  /** No TLS at all (a relay on loopback or a private network only). */
  | 'none'

export interface EmailOptions {
  host: string
  port: number
  tls: SmtpTlsMode
  /** SMTP AUTH user; none: no authentication. */
  user?: string
  password?: string
  /** The sender, `address@host` or `Name <address@host>`. */
  from: string
  /**
   * The operator's message. Placeholders: `{{code}}`, `{{app_name}}`, `{{expires_minutes}}`; any
   * other is a configuration error naming it. HTML gets its values escaped.
   * @default the subject and body of the proxy settings' e-mail template, no HTML part
   */
  templates?: EmailTemplates
}

export interface EmailTemplates {
  subject?: string
  text?: string
  html?: string
}

export type SmsOptions = TwilioOptions | SmsWebhookOptions

/** Twilio's Messages API (form-encoded POST, HTTP basic auth with the account SID and auth token). */
export interface TwilioOptions {
  provider: 'twilio'
  accountSid: string
  authToken: string
  /** The sending number (E.164) or messaging service's sender. */
  from: string
  /** @default 'https://api.twilio.com' */
  baseUrl?: string
  /**
   * The text; placeholders as for e-mail.
   * @default the body of the proxy settings' SMS template
   */
  template?: string
}

/**
 * Any SMS gateway behind an HTTPS endpoint: a JSON POST `{ id, to, body }`, signed with
 * HMAC-SHA256 under `secret` over `${timestamp}.${body}` (headers `X-Latchkey-Timestamp`, unix
 * seconds, and `X-Latchkey-Signature: sha256=<hex>`); `X-Latchkey-Delivery-Id` is the same on every
 * try of one message (an idempotency key).
 */
export interface SmsWebhookOptions {
  provider: 'webhook'
  url: string
  secret: string
  /**
   * The text; placeholders as for e-mail.
   * @default the body of the proxy settings' SMS template
   */
  template?: string
}

/** One e-mail as the mailer sends it. */
export interface MailMessage {
  from: string
  /** One plain address (`kernel/emailAddress.ts`): the message goes to it alone. */
  to: string
  subject: string
  text: string
  html?: string
  /** The same on every try of one message. */
  messageId: string
}

/** Sends mail over one SMTP configuration; `send` rejects with the server's or socket's error. */
export interface Mailer {
  send(message: MailMessage, signal: AbortSignal): Promise<void>
  close(): void
}

export type MailerFactory = (options: EmailOptions & { timeoutMs: number }) => Mailer
