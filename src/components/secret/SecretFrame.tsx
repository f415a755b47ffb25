import { forwardRef, useEffect, useImperativeHandle, useRef, useState } from 'react'
import { bytesToHex } from '../../core/utils/hex.ts'
import { useLatchkey } from '../../react/index.ts'
import type { Ui } from '../ui/useUi.ts'
import type { SecretKey } from './secretStrings.ts'

/**
 * How the secret frame is loaded. `url`: an iframe on the service origin (`{baseUrl}/frame/…`),
 * cross-origin to the app, so the app's scripts cannot read it. `inline`: the same page fetched
 * through the client's `fetch` and shown in a sandboxed `srcdoc` iframe (an opaque origin), for a
 * service running inside the page (Storybook, tests) where there is no origin to load from.
 *
 * An opaque origin cannot be named as a message's target or checked as a sender's, and any page
 * holding a reference to the app's window (its opener, an iframe in it) can navigate the frame to
 * a page of its own. So in `inline` mode each load gets a random channel, passed to the service in
 * the page's URL and written into the page only: the kit reads a message only from the frame's
 * window, from an opaque origin (`'null'`), carrying that load's channel, and one `ready` per load.
 * What the kit posts into the frame never carries the channel.
 * @default 'url'
 */
export type SecretFrameMode = 'url' | 'inline'

export type FrameEvent =
  | { type: 'ready'; targetPublicKey?: string }
  | { type: 'shown' }
  | { type: 'input'; words: number; valid: boolean }
  | { type: 'encrypted'; encryptedBundle: string }
  | { type: 'error'; code: string }

export interface SecretFrameHandle {
  post(message: Record<string, unknown>): void
}

// Theme variables copied into the frame so it looks like the rest of the component.
const THEME_VARS = [
  '--lk-bg',
  '--lk-bg-subtle',
  '--lk-fg',
  '--lk-fg-muted',
  '--lk-border',
  '--lk-border-strong',
  '--lk-accent',
  '--lk-radius',
  '--lk-font',
  '--lk-font-mono',
]

export const SecretFrame = forwardRef<
  SecretFrameHandle,
  {
    kind: 'export' | 'import'
    mode: SecretFrameMode
    ui: Ui<SecretKey>
    title: string
    labels: Record<string, string>
    onEvent: (event: FrameEvent) => void
    height?: number
  }
>(function SecretFrame({ kind, mode, ui, title, labels, onEvent, height }, ref) {
  const client = useLatchkey()
  const frame = useRef<HTMLIFrameElement>(null)
  // Inline mode: the page of the current load, and the channel written into it.
  const [inline, setInline] = useState<{ html: string; channel: string } | null>(null)
  const channel = useRef<string | null>(null)
  channel.current = inline?.channel ?? null
  // The channel whose `ready` was read: a load says it once (a second would be another key).
  const readied = useRef<string | null>(null)
  const onEventRef = useRef(onEvent)
  onEventRef.current = onEvent
  const serviceOrigin = new URL(client.config.baseUrl).origin
  const hostOrigin = typeof location === 'undefined' ? '' : location.origin
  const url = `${client.config.baseUrl}/frame/${kind}?origin=${encodeURIComponent(hostOrigin)}`
  const targetOrigin = mode === 'url' ? serviceOrigin : '*'

  useImperativeHandle(
    ref,
    () => ({
      post: (message) =>
        frame.current?.contentWindow?.postMessage({ target: 'latchkey-frame', ...message }, targetOrigin),
    }),
    [targetOrigin],
  )

  useEffect(() => {
    if (mode !== 'inline') return
    let live = true
    const loadChannel = bytesToHex(crypto.getRandomValues(new Uint8Array(16)))
    client.config
      .fetch(`${url}&channel=${loadChannel}`, { method: 'GET' })
      .then(async (response) => {
        if (!response.ok) throw new Error(`frame ${response.status}`)
        const html = await response.text()
        if (live) setInline({ html, channel: loadChannel })
      })
      .catch(() => live && onEventRef.current({ type: 'error', code: 'FRAME_LOAD_FAILED' }))
    return () => {
      live = false
    }
  }, [client, mode, url])

  useEffect(() => {
    const onMessage = (event: MessageEvent) => {
      // Only our frame; in url mode only from the service origin, in inline mode only from an
      // opaque origin with this load's channel (see SecretFrameMode).
      if (!frame.current || event.source !== frame.current.contentWindow) return
      if (mode === 'url' && event.origin !== serviceOrigin) return
      const data = event.data as (FrameEvent & { source?: string; channel?: unknown }) | null
      if (data?.source !== 'latchkey-frame') return
      if (mode === 'inline') {
        if (event.origin !== 'null' || channel.current === null || data.channel !== channel.current) return
        if (data.type === 'ready') {
          if (readied.current === channel.current) return
          readied.current = channel.current
        }
      }
      if (data.type === 'ready') {
        const root = frame.current.closest('.lk-root') ?? document.documentElement
        const style = getComputedStyle(root)
        const theme = Object.fromEntries(
          THEME_VARS.map((name) => [name, style.getPropertyValue(name).trim()]),
        )
        frame.current.contentWindow?.postMessage(
          { target: 'latchkey-frame', type: 'init', theme, dir: ui.dir, lang: ui.locale, labels },
          targetOrigin,
        )
      }
      onEventRef.current(data)
    }
    window.addEventListener('message', onMessage)
    return () => window.removeEventListener('message', onMessage)
  }, [mode, serviceOrigin, targetOrigin, ui.dir, ui.locale, labels])

  if (mode === 'inline' && inline === null)
    return <div className="lk-frame" aria-busy="true" style={{ height }} />
  return (
    <iframe
      ref={frame}
      className="lk-frame"
      title={title}
      style={{ height }}
      // Inline mode: no allow-same-origin, so the frame is an opaque origin the page cannot script.
      sandbox={mode === 'inline' ? 'allow-scripts' : 'allow-scripts allow-same-origin'}
      referrerPolicy="no-referrer"
      {...(mode === 'inline' ? { srcDoc: inline?.html ?? '' } : { src: url })}
    />
  )
})
