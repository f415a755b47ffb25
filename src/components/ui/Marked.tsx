import type { ReactNode } from 'react'
import type { enHidden } from '../i18n/en/hidden.ts'
import { Alert } from './Alert.tsx'
import { HIDDEN_ALL } from './hiddenChars.ts'
import type { Ui } from './useUi.ts'

/** The strings these parts read: a screen showing them joins `hiddenStrings` to its own. */
type HiddenKey = keyof typeof enHidden

/**
 * Text a page or a requester chose, with each hidden or bidirectional-control character
 * (`HIDDEN`) shown as a marked `U+XXXX` instead of applied: `Pay \u202E1000\u202C USDC` shows
 * `Pay U+202E 1000 U+202C USDC`, not `Pay 0001 USDC`. Screen readers hear "hidden character
 * U+202E" for each.
 */
export function Marked({ ui, text }: { ui: Ui<HiddenKey>; text: string }) {
  const parts: ReactNode[] = []
  let last = 0
  for (const match of text.matchAll(HIDDEN_ALL)) {
    if (match.index > last) parts.push(text.slice(last, match.index))
    parts.push(
      <span key={match.index} className="lk-badge" data-tone="danger" data-lk-hidden-char="">
        <span className="lk-visually-hidden">{`${ui.t('hiddenChar')} `}</span>
        {`U+${match[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`}
      </span>,
    )
    last = match.index + match[0].length
  }
  if (last < text.length) parts.push(text.slice(last))
  return <>{parts}</>
}

/** Says that text below holds such characters, marked (a `status`: read out when it appears). */
export function HiddenWarning({ ui }: { ui: Ui<HiddenKey> }) {
  return <Alert tone="warning">{ui.t('hiddenCharsWarning')}</Alert>
}
