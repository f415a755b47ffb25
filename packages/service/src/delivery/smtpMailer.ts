// Node only (nodemailer opens sockets): exported from `@latchkey/service/node`.
import { createTransport } from 'nodemailer'
import addressparser from 'nodemailer/lib/addressparser'
import type { Mailer, MailerFactory } from './DeliveryOptions.ts'

/** A recipient the mailer will not send to; `EENVELOPE` as nodemailer's own envelope errors. */
class RecipientError extends Error {
  override name = 'RecipientError'
  readonly code = 'EENVELOPE'
}

/**
 * Refuses (`EENVELOPE`, final) a recipient nodemailer would read as anything but the one address it
 * is: a display name (`n1<victim@x.io>`), a list (`a,victim@x.io`), a group (`a:victim@x.io;`) or
 * a comment (`victim@x.io(a)`) would each reach victim@x.io while the send budget counted another
 * mailbox. The sign-in wing takes plain addresses only (`kernel/emailAddress.ts`); this holds for
 * any caller of the mailer and for codes queued before that rule.
 */
function assertOneMailbox(to: string): void {
  const parsed = addressparser(to)
  const only = parsed.length === 1 ? parsed[0] : undefined
  if (only === undefined || only.group !== undefined || only.name !== '' || only.address !== to)
    throw new RecipientError('the recipient is not exactly one plain address')
}

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
      assertOneMailbox(message.to)
      // The address as an object and the envelope spelled out: nodemailer parses neither again.
      const to = { name: '', address: message.to }
      await transport.sendMail({
        from: message.from,
        to,
        envelope: { from: message.from, to: [to] },
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
