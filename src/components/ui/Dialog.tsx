import { type ReactNode, useEffect, useRef } from 'react'
import type { Ui } from './useUi.ts'

export interface DialogProps {
  open: boolean
  /** Called with `false` on Escape, backdrop click or the close button. */
  onOpenChange: (open: boolean) => void
  /** Id of the element that names the dialog (its title). */
  labelledBy: string
  describedBy?: string
  /** Only its theme scope (`rootProps`): the dialog renders no strings of its own. */
  ui: Pick<Ui, 'rootProps'>
  children: ReactNode
}

/**
 * The WAI-ARIA dialog pattern on the native `<dialog>` element: `showModal()` makes the rest of
 * the page inert and moves focus in; Escape arrives as the `cancel` event; on close, focus goes
 * back to whatever had it before (the trigger). Controlled: the parent owns `open`.
 */
export function Dialog({ open, onOpenChange, labelledBy, describedBy, ui, children }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null)
  const returnFocus = useRef<HTMLElement | null>(null)
  const onOpenChangeRef = useRef(onOpenChange)
  onOpenChangeRef.current = onOpenChange

  useEffect(() => {
    const dialog = ref.current
    if (!dialog) return
    if (open && !dialog.open) {
      returnFocus.current = document.activeElement as HTMLElement | null
      dialog.showModal()
      // showModal() focuses the first focusable element (often Close); a step can name a better one.
      dialog.querySelector<HTMLElement>('[data-lk-autofocus]')?.focus()
    } else if (!open && dialog.open) {
      dialog.close()
    }
  }, [open])

  useEffect(() => {
    const dialog = ref.current
    if (!dialog) return
    const onCancel = (event: Event) => {
      // Escape: let the parent decide, so a controlled `open` stays the single source of truth.
      event.preventDefault()
      onOpenChangeRef.current(false)
    }
    const onClose = () => {
      const target = returnFocus.current
      returnFocus.current = null
      if (target?.isConnected && typeof target.focus === 'function') target.focus()
    }
    dialog.addEventListener('cancel', onCancel)
    dialog.addEventListener('close', onClose)
    return () => {
      dialog.removeEventListener('cancel', onCancel)
      dialog.removeEventListener('close', onClose)
      if (dialog.open) dialog.close()
    }
  }, [])

  return (
    // The dialog element itself only receives clicks on the backdrop: the panel fills it.
    <dialog
      ref={ref}
      {...ui.rootProps}
      className={`${ui.rootProps.className} lk-dialog`}
      aria-labelledby={labelledBy}
      aria-describedby={describedBy}
      onClick={(event) => {
        if (event.target === event.currentTarget) onOpenChangeRef.current(false)
      }}
      onKeyDown={(event) => {
        // Handled here as well as through `cancel`: preventing the key's default stops the
        // browser's own close request, so the parent hears about it exactly once.
        if (event.key === 'Escape' && !event.defaultPrevented) {
          event.preventDefault()
          onOpenChangeRef.current(false)
        }
      }}
    >
      {open ? children : null}
    </dialog>
  )
}
