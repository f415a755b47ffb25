// A real SMTP server on loopback (the `smtp-server` package) that keeps what it accepts, parsed by
// `mailparser`: the delivery tests read codes from here, never from the service.
import type { AddressInfo } from 'node:net'
import { type ParsedMail, simpleParser } from 'mailparser'
import { SMTPServer } from 'smtp-server'

export interface Mail {
  from: string
  to: string
  subject: string
  text: string
  html: string | undefined
  messageId: string | undefined
}

/**
 * How the server answers: accept, refuse the recipient with an SMTP status, or take the message
 * and never answer its end (a server that dies after the message was handed over).
 */
export type SmtpMode = 'accept' | 451 | 550 | 'stall'

export interface SmtpMailbox {
  port: number
  mails: Mail[]
  /** Recipients tried, accepted or not. */
  attempts: string[]
  mode: SmtpMode
  /** Resolves with the first `count` mails (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<Mail[]>
  close(): Promise<void>
}

const text = (address: ParsedMail['from'] | ParsedMail['to']) =>
  Array.isArray(address) ? address.map((a) => a.text).join(', ') : (address?.text ?? '')

/** Starts a mailbox on 127.0.0.1 (a free port unless `port` is given); `auth` requires that login. */
export async function startSmtpMailbox(
  options: { port?: number; auth?: { user: string; password: string } } = {},
): Promise<SmtpMailbox> {
  const mails: Mail[] = []
  const attempts: string[] = []
  const waiters = new Set<() => void>()
  const box = { mode: 'accept' as SmtpMode }
  const server = new SMTPServer({
    disabledCommands: options.auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    allowInsecureAuth: true,
    authOptional: !options.auth,
    logger: false,
    // A stalled client does not hold the test's teardown.
    closeTimeout: 500,
    onAuth(auth, _session, callback) {
      if (auth.username === options.auth?.user && auth.password === options.auth?.password)
        return callback(null, { user: auth.username })
      return callback(new Error('invalid credentials'))
    },
    onRcptTo(address, _session, callback) {
      attempts.push(address.address)
      if (box.mode === 'accept' || box.mode === 'stall') return callback()
      const error = new Error(box.mode === 451 ? 'try again later' : 'no such user') as Error & {
        responseCode: number
      }
      error.responseCode = box.mode
      return callback(error)
    },
    onData(stream, _session, callback) {
      if (box.mode === 'stall') {
        stream.resume()
        return
      }
      simpleParser(stream).then(
        (parsed) => {
          mails.push({
            from: text(parsed.from),
            to: text(parsed.to),
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html: typeof parsed.html === 'string' ? parsed.html : undefined,
            messageId: parsed.messageId,
          })
          for (const wake of waiters) wake()
          callback()
        },
        (error: Error) => callback(error),
      )
    },
  })
  // A client that dies mid-message (the crash tests kill the service while it hands a mail over)
  // resets its connection: smtp-server reports that as an 'error' event, which is expected here.
  // Anything else still fails the test run.
  server.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') throw error
  })
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject)
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve())
  })
  const port = (server.server.address() as AddressInfo).port
  return {
    port,
    mails,
    attempts,
    get mode() {
      return box.mode
    },
    set mode(mode: SmtpMode) {
      box.mode = mode
    },
    waitFor(count, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (mails.length < count) return
          waiters.delete(check)
          clearTimeout(timer)
          resolve(mails.slice(0, count))
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`${mails.length} of ${count} mails arrived within ${timeoutMs} ms`))
        }, timeoutMs)
        waiters.add(check)
        check()
      })
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** The 6 to 9 digit code in a message's text. */
export function codeIn(body: string): string {
  const match = /\b(\d{6,9})\b/.exec(body)
  if (!match) throw new Error('no code in the message')
  return match[1]!
}
