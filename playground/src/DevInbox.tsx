import { useSession } from 'latchkey'
import { useEffect, useRef, useState } from 'react'
import type { PlaygroundService } from './loadPlaygroundConfig.ts'

/** How many messages the panel lists (the outbox page has them all); no scrolling region needed. */
const INBOX_SIZE = 5

export interface OutboxMessage {
  otpId: string
  otpType: string
  contact: string
  code: string
  subject: string
  body: string
  sentAt: string
}

/**
 * The local service's dev outbox (`GET /dev/outbox`): every OTP e-mail and SMS it "sent", so a
 * person can finish an OTP sign-in without a mail server. Polls every two seconds.
 */
export function DevInbox({ service }: { service: PlaygroundService }) {
  const [messages, setMessages] = useState<OutboxMessage[] | null>(null)
  const [error, setError] = useState<string | null>(null)

  useEffect(() => {
    let stopped = false
    let timer: ReturnType<typeof setTimeout> | undefined
    const poll = async () => {
      try {
        const response = await fetch(`${service.baseUrl}/dev/outbox`, { cache: 'no-store' })
        if (!response.ok) throw new Error(`HTTP ${response.status}`)
        const body = (await response.json()) as { messages: OutboxMessage[] }
        if (!stopped) {
          setMessages(
            [...body.messages]
              .sort((a, b) => Date.parse(b.sentAt) - Date.parse(a.sentAt))
              .slice(0, INBOX_SIZE),
          )
          setError(null)
        }
      } catch (cause) {
        if (!stopped) setError(`Can’t read the outbox (${(cause as Error).message}).`)
      }
      if (!stopped) timer = setTimeout(poll, 2000)
    }
    poll()
    return () => {
      stopped = true
      clearTimeout(timer)
    }
  }, [service.baseUrl])

  return (
    <section className="pg-card" aria-labelledby="pg-inbox-title">
      <NewCodeToast messages={messages} />
      <div className="pg-card-head">
        <h2 id="pg-inbox-title">Dev inbox</h2>
        <a className="pg-muted" href={`${service.baseUrl}/dev/outbox`} target="_blank" rel="noreferrer">
          Open outbox
        </a>
      </div>
      <p className="pg-card-lead">
        One-time codes the local service sends by e-mail or SMS land here instead of a real inbox.
      </p>
      {error ? <p className="pg-error">{error}</p> : null}
      {messages === null ? (
        <p className="pg-muted">Loading…</p>
      ) : messages.length === 0 ? (
        <p className="pg-muted">No messages yet. Sign in with e-mail or SMS to receive a code.</p>
      ) : (
        <ul className="pg-inbox" aria-label="Latest messages, newest first">
          {messages.map((message) => (
            <li key={message.otpId}>
              <span className="pg-inbox-contact">{message.contact}</span>
              <span className="pg-inbox-code" data-testid="outbox-code">
                {message.code}
              </span>
              <span className="pg-inbox-meta">
                {message.otpType === 'OTP_TYPE_SMS' ? 'SMS' : 'E-mail'} ·{' '}
                <time dateTime={message.sentAt}>{new Date(message.sentAt).toLocaleTimeString()}</time>
              </span>
            </li>
          ))}
        </ul>
      )}
      <p className="pg-muted" style={{ marginBottom: 0 }}>
        OAuth sign-in uses the service’s{' '}
        <a
          href={`${service.baseUrl}/dev/oidc/google/.well-known/openid-configuration`}
          target="_blank"
          rel="noreferrer"
        >
          dev identity provider
        </a>
        : type any e-mail and name on its page.
      </p>
    </section>
  )
}

/**
 * Shows the newest code for 20 s in a manual popover: the top layer puts it above the sign-in
 * dialog, whose backdrop covers the inbox while a person types the code. A new session means the
 * code was used: the toast goes at once instead of covering the page after sign-in, and a code sent
 * before that session began, read by a poll that came after it, is not shown at all.
 */
export function NewCodeToast({ messages }: { messages: OutboxMessage[] | null }) {
  const ref = useRef<HTMLDivElement>(null)
  const [shown, setShown] = useState<OutboxMessage | null>(null)
  const seen = useRef<string | null | undefined>(undefined)
  const sessionId = useSession()?.id
  const knownSession = useRef(sessionId)
  /** When the current session appeared on this page (undefined: signed out, or signed in at load). */
  const signedInAt = useRef<number | undefined>(undefined)

  useEffect(() => {
    if (sessionId === knownSession.current) return
    knownSession.current = sessionId
    signedInAt.current = sessionId === undefined ? undefined : Date.now()
    if (sessionId !== undefined) setShown(null)
  }, [sessionId])

  const newest = messages?.[0]
  useEffect(() => {
    if (messages === null) return
    // The first read only records what was already there: old codes are not news.
    if (seen.current === undefined) {
      seen.current = newest?.otpId ?? null
      return
    }
    if (!newest || newest.otpId === seen.current) return
    seen.current = newest.otpId
    if (signedInAt.current !== undefined && Date.parse(newest.sentAt) <= signedInAt.current) return
    setShown(newest)
  }, [messages, newest])

  useEffect(() => {
    const element = ref.current
    if (!element) return
    if (!shown) {
      if (element.matches(':popover-open')) element.hidePopover()
      return
    }
    // Re-showing moves it to the top of the top layer, above a dialog opened since.
    if (element.matches(':popover-open')) element.hidePopover()
    element.showPopover()
    const timer = setTimeout(() => {
      if (element.matches(':popover-open')) element.hidePopover()
      setShown(null)
    }, 20_000)
    return () => clearTimeout(timer)
  }, [shown])

  return (
    <div ref={ref} popover="manual" className="pg-toast" role="status">
      {shown ? (
        <>
          <strong>
            Dev inbox · {shown.otpType === 'OTP_TYPE_SMS' ? 'SMS' : 'e-mail'} to {shown.contact}
          </strong>
          <span className="pg-inbox-code">{shown.code}</span>
        </>
      ) : null}
    </div>
  )
}
