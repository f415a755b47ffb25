import { Hono, type MiddlewareHandler } from 'hono'
import type { OtpMessage } from '../otp/createOtpEngine.ts'

/** One delivered message as the outbox shows it (not which organization sent it). */
export type OutboxMessage = Omit<OtpMessage, 'organizationId'>

export interface OutboxOptions {
  /** Oldest messages are dropped beyond this many. @default 500 */
  limit?: number
  /**
   * Runs before every outbox route: the service passes its local-only guard (loopback clients,
   * allowed origins). Without one the routes answer anyone who can reach them.
   */
  guard?: MiddlewareHandler
}

export type Outbox = ReturnType<typeof createOutbox>

/**
 * The development mailbox: OTP delivery of the local service ends here instead of a mail or SMS
 * gateway. It is the only place where a code is ever written down, and it lives in memory.
 */
export function createOutbox(options: OutboxOptions = {}) {
  const limit = options.limit ?? 500
  const messages: OutboxMessage[] = []
  return {
    guard: options.guard,
    deliver(message: OtpMessage): void {
      const { otpId, otpType, contact, code, subject, body, sentAt } = message
      messages.unshift({ otpId, otpType, contact, code, subject, body, sentAt })
      if (messages.length > limit) messages.length = limit
    },
    /** Newest first; `contact` compares case-insensitively (e-mail addresses are stored lower-case). */
    list(filter: { contact?: string } = {}): OutboxMessage[] {
      const contact = filter.contact?.trim().toLowerCase()
      return messages
        .filter((m) => contact === undefined || contact === '' || m.contact === contact)
        .map((m) => ({ ...m }))
    },
    clear(): void {
      messages.length = 0
    },
  }
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  )

function outboxPage(messages: OutboxMessage[], contact: string): string {
  const rows = messages
    .map(
      (m) => `<article class="msg" aria-labelledby="m-${escapeHtml(m.otpId)}">
  <h2 id="m-${escapeHtml(m.otpId)}">${m.otpType === 'OTP_TYPE_SMS' ? 'SMS' : 'E-mail'} to ${escapeHtml(m.contact)}</h2>
  <p class="code">Code: <output>${escapeHtml(m.code)}</output></p>
  ${m.subject ? `<p><strong>Subject:</strong> ${escapeHtml(m.subject)}</p>` : ''}
  <p class="body">${escapeHtml(m.body)}</p>
  <p class="meta"><time datetime="${escapeHtml(m.sentAt)}">${escapeHtml(m.sentAt)}</time> · otpId <code>${escapeHtml(m.otpId)}</code></p>
</article>`,
    )
    .join('\n')
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Latchkey dev outbox</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; margin: 2rem auto; max-width: 46rem; padding: 0 1rem; color: #1a1a1a; background: #fff; }
  @media (prefers-color-scheme: dark) { body { color: #eee; background: #161616; } .msg { border-color: #444; } }
  .msg { border: 1px solid #ccc; border-radius: 8px; padding: 0.75rem 1rem; margin: 1rem 0; }
  .msg h2 { font-size: 1.05rem; margin: 0 0 0.25rem; }
  .code output { font: 700 1.5rem/1.2 ui-monospace, monospace; letter-spacing: 0.15em; }
  .meta { font-size: 0.85rem; opacity: 0.8; margin: 0; }
  label, input, button { font: inherit; }
  :focus-visible { outline: 3px solid #2563eb; outline-offset: 2px; }
</style>
</head>
<body>
<main>
<h1>Dev outbox</h1>
<p>One-time codes the local service would have sent by e-mail or SMS, newest first. JSON: <a href="/dev/outbox.json">/dev/outbox.json</a>.</p>
<form method="get" action="/dev/outbox" role="search">
  <label for="contact">Contact</label>
  <input id="contact" name="contact" type="search" value="${escapeHtml(contact)}" autocomplete="off">
  <button type="submit">Filter</button>
</form>
<section aria-live="polite" aria-label="Messages">
${rows || '<p>No messages yet.</p>'}
</section>
</main>
</body>
</html>`
}

/**
 * Routes of the outbox, mounted at `/dev`:
 * `GET /outbox` answers JSON `{ messages }` unless the client asks for HTML first (a browser),
 * `GET /outbox.json` always JSON, `DELETE /outbox` empties it. `?contact=` filters.
 */
export function outboxRoutes(outbox: Outbox): Hono {
  const app = new Hono()
  // Codes are account keys: only loopback clients and allowed origins may read them (no `*`).
  if (outbox.guard) app.use('/outbox*', outbox.guard)
  app.get('/outbox.json', (c) => c.json({ messages: outbox.list({ contact: c.req.query('contact') }) }))
  app.get('/outbox', (c) => {
    const contact = c.req.query('contact') ?? ''
    const messages = outbox.list({ contact })
    if (prefersHtml(c.req.header('accept'))) {
      c.header('Cache-Control', 'no-store')
      return c.html(outboxPage(messages, contact))
    }
    return c.json({ messages })
  })
  app.delete('/outbox', (c) => {
    outbox.clear()
    return c.json({ messages: [] })
  })
  return app
}

/** True when the Accept header ranks text/html above application/json (browsers do). */
function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false
  let html = -1
  let json = -1
  for (const part of accept.split(',')) {
    const [type, ...params] = part.trim().toLowerCase().split(';')
    const q = Number(
      params
        .map((p) => p.trim())
        .find((p) => p.startsWith('q='))
        ?.slice(2) ?? '1',
    )
    if (type === 'text/html' || type === 'application/xhtml+xml') html = Math.max(html, q)
    if (type === 'application/json') json = Math.max(json, q)
  }
  return html > 0 && html > json
}
