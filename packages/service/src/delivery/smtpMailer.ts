// Node only (nodemailer opens sockets): exported from `@latchkey/service/node`.
import { createTransport } from 'nodemailer'
import type { Mailer, MailerFactory } from './DeliveryOptions.ts'

/**
 * SMTP through nodemailer: one pooled transport per configuration. `tls` connects with TLS,
 * `starttls` requires the upgrade (a server that does not offer it is an error, never a silent
 * plain-text fallback), `none` never upgrades. The connection, greeting and socket timeouts are
 * the send's timeout, so a stalled server fails the send rather than holding the job.
 */
export const smtpMailer: MailerFactory = (options) => {
  const transport = createTransport({
    host: options.host,
    port: options.port,
    secure: options.tls === 'tls',
    requireTLS: options.tls === 'starttls',
    ignoreTLS: options.tls === 'none',
    ...(options.user !== undefined ? { auth: { user: options.user, pass: options.password ?? '' } } : {}),
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
    // Each message on its own connection: a pooled connection the server dropped fails a send.
    pool: false,
    // nodemailer logs nothing of ours (addresses, bodies).
    logger: false,
    debug: false,
  })
  const mailer: Mailer = {
    async send(message, signal) {
      signal.throwIfAborted()
      await transport.sendMail({
        from: message.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        ...(message.html !== undefined ? { html: message.html } : {}),
        messageId: message.messageId,
      })
    },
    close() {
      transport.close()
    },
  }
  return mailer
}
