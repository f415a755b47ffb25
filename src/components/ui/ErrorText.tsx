import type { ReactNode } from 'react'
import { errorWords, fillMarkers } from './errorMessage.ts'
import type { Ui } from './useUi.ts'

// A `backticked` span, or an http(s) URL outside one. Nothing else in a message is markup.
const TOKEN = /`([^`\n]+)`|\bhttps?:\/\/[^\s`<>"']+/g
// Punctuation that ends the sentence around a URL rather than the URL itself.
const TRAILING = /[.,;:!?)\]؟،]+$/

/**
 * A message as React nodes: `backticked` spans become `<code>`, http(s) URLs become links, the
 * rest stays text (React escapes every piece, so a message can never inject markup). `text` is the
 * kit's own sentence: words from elsewhere (a service's code, a contract's revert string) go in
 * `values`, which fill the sentence's `{name}` markers as plain text once it is parsed, or are shown
 * as text without `MessageText`.
 */
export function MessageText({ text, values }: { text: string; values?: Readonly<Record<string, string>> }) {
  const fill = (piece: string) => (values ? fillMarkers(piece, values) : piece)
  const parts: ReactNode[] = []
  let last = 0
  for (const match of text.matchAll(TOKEN)) {
    const start = match.index
    if (start > last) parts.push(fill(text.slice(last, start)))
    if (match[1] !== undefined) {
      parts.push(<code key={start}>{fill(match[1])}</code>)
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
  if (last < text.length) parts.push(fill(text.slice(last)))
  return <span className="lk-message">{parts}</span>
}

/** The kit's sentence for an error (see `errorWords`): its markup rendered, what the error carries as text. */
export function ErrorText({ ui, error }: { ui: Ui; error: unknown }) {
  const { text, values } = errorWords(ui.t, error)
  return <MessageText text={text} values={values} />
}
