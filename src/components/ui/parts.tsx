import type { ButtonHTMLAttributes, ReactNode } from 'react'
import { BackIcon, CloseIcon } from './baseIcons.tsx'
import type { Ui } from './useUi.ts'

// What the start-up code (the sign-in trigger and the dialog shell) draws: buttons, the spinner and
// the header. The notices only steps and screens draw (Alert.tsx, Footer.tsx) have files of their
// own, so they load with those.

export interface ButtonProps extends ButtonHTMLAttributes<HTMLButtonElement> {
  variant?: 'primary' | 'secondary' | 'ghost' | 'danger'
  size?: 'md' | 'sm'
  block?: boolean
  loading?: boolean
}

export function Button({
  variant = 'primary',
  size = 'md',
  block,
  loading,
  children,
  type,
  ...rest
}: ButtonProps) {
  return (
    <button
      type={type ?? 'button'}
      className="lk-button"
      data-variant={variant}
      data-size={size}
      data-block={block ? '' : undefined}
      aria-busy={loading || undefined}
      {...rest}
      disabled={rest.disabled || loading}
    >
      {loading ? <span className="lk-spinner" aria-hidden="true" /> : null}
      {children}
    </button>
  )
}

export function Spinner({ size }: { size?: 'lg' }) {
  return <span className="lk-spinner" data-size={size} aria-hidden="true" />
}

/** Dialog header: optional back button, title and description, close button. */
export function Header({
  ui,
  titleId,
  title,
  description,
  descriptionId,
  onBack,
  onClose,
}: {
  ui: Ui<'back' | 'close'>
  titleId: string
  title: ReactNode
  description?: ReactNode
  descriptionId?: string
  onBack?: () => void
  onClose?: () => void
}) {
  return (
    <div className="lk-header">
      {onBack ? (
        <button
          type="button"
          className="lk-icon-button"
          data-slot="start"
          aria-label={ui.t('back')}
          onClick={onBack}
        >
          <BackIcon />
        </button>
      ) : null}
      <div className="lk-header-text">
        {/* Focusable by script only: a new step moves focus here (see StepFocus). */}
        <h2 className="lk-title" id={titleId} tabIndex={-1}>
          {title}
        </h2>
        {description ? (
          <p className="lk-description" id={descriptionId}>
            {description}
          </p>
        ) : null}
      </div>
      {onClose ? (
        <button
          type="button"
          className="lk-icon-button"
          data-slot="end"
          aria-label={ui.t('close')}
          onClick={onClose}
        >
          <CloseIcon />
        </button>
      ) : null}
    </div>
  )
}
