import { useLayoutEffect, useRef } from 'react'
import { Button } from './parts.tsx'
import type { Ui } from './useUi.ts'

export interface ConfirmStepProps {
  ui: Ui<'cancel'>
  /** The question, as the group's legend: "Remove Daily limit of 1 ETH? …". */
  question: string
  /** The dangerous answer: "Yes, remove". */
  confirm: string
  onConfirm: () => void
  /** "Cancel" or Escape: the caller puts focus back on the button that asked. */
  onCancel: () => void
}

/**
 * "Are you sure?" under a list row: the question and a dangerous "Yes" with Cancel. Focus moves to
 * "Yes" when it appears; Escape cancels. Shared by `<LinkedLogins/>` (unlink) and
 * `<SpendingLimits/>` (remove).
 */
export function ConfirmStep({ ui, question, confirm, onConfirm, onCancel }: ConfirmStepProps) {
  const yes = useRef<HTMLButtonElement>(null)
  useLayoutEffect(() => {
    yes.current?.focus()
  }, [])
  return (
    <fieldset
      className="lk-stack"
      data-gap="sm"
      style={{ flexBasis: '100%', border: 0, padding: 0, margin: 0, minWidth: 0 }}
      onKeyDown={(event) => {
        if (event.key === 'Escape') onCancel()
      }}
    >
      <legend style={{ padding: 0, overflowWrap: 'anywhere' }}>{question}</legend>
      <div className="lk-row" data-wrap="">
        <button
          ref={yes}
          type="button"
          className="lk-button"
          data-variant="danger"
          data-size="sm"
          onClick={onConfirm}
        >
          {confirm}
        </button>
        <Button size="sm" variant="ghost" onClick={onCancel}>
          {ui.t('cancel')}
        </Button>
      </div>
    </fieldset>
  )
}
