import { useEffect, useState } from 'react'
import { CheckIcon, CopyIcon } from './icons.tsx'
import type { Ui } from './useUi.ts'

/** Copies `text`; the label switches to "Copied" (announced) for a moment. */
export function CopyButton({ ui, text, label }: { ui: Ui; text: string; label: string }) {
  const [copied, setCopied] = useState(false)
  useEffect(() => {
    if (!copied) return
    const timer = setTimeout(() => setCopied(false), 1600)
    return () => clearTimeout(timer)
  }, [copied])
  return (
    <button
      type="button"
      className="lk-button"
      data-variant="ghost"
      data-size="sm"
      aria-label={copied ? ui.t('copied') : label}
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text)
          setCopied(true)
        } catch {
          // Clipboard refused (permissions, insecure context): the text stays selectable.
        }
      }}
    >
      {copied ? <CheckIcon size={16} /> : <CopyIcon />}
      <span className="lk-copy-label" aria-live="polite">
        {copied ? ui.t('copied') : ui.t('copy')}
      </span>
    </button>
  )
}
