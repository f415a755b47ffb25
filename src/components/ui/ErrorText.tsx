import type { ReactNode } from 'react'
import { errorMessage } from './errorMessage.ts'
import type { Ui } from './useUi.ts'

// A `backticked` span, or an http(s) URL outside one. Nothing else in a message is markup.
const TOKEN = /`([^`\n]+)`|\bhttps?:\/\/[^\s`<>"']+/g
// Punctuation that ends the sentence around a URL rather than the URL itself.
const TRAILING = /[.,;:!?)\]؟،]+$/

/**
 * A message as React nodes: `backticked` spans become `<code>`, http(s) URLs become links, the
 * rest stays text (React escapes every piece, so a message can never inject markup).
 */
export function MessageText({ text }: { text: string }) {
  const parts: ReactNode[] = []
  let last = 0
  for (const match of text.matchAll(TOKEN)) {
    const start = match.index
    if (start > last) parts.push(text.slice(last, start))
    if (match[1] !== undefined) {
      parts.push(<code key={start}>{match[1]}</code>)
      last = start + match[0].length
    } else {
      const url = match[0].replace(TRAILING, '')
      parts.push(
        <a key={start} href={url} target="_blank" rel="noreferrer">
          {url}
        </a>,
      )
      last = start + url.length
    }
  }
  if (last < text.length) parts.push(text.slice(last))
  return <span className="lk-message">{parts}</span>
}

/** The kit's sentence for an error (see `errorMessage`), rendered with `MessageText`. */
export function ErrorText({ ui, error }: { ui: Ui; error: unknown }) {
  return <MessageText text={errorMessage(ui.t, error)} />
}
