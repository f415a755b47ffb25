import type { ButtonHTMLAttributes, ReactNode } from 'react'
import { AlertIcon, BackIcon, CloseIcon, ShieldIcon, WarningIcon } from './baseIcons.tsx'
import type { Ui } from './useUi.ts'

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

/** A message box. Errors use `role="alert"` so screen readers announce them at once. */
export function Alert({
  tone = 'info',
  title,
  children,
  action,
}: {
  tone?: 'info' | 'error' | 'warning' | 'success'
  title?: ReactNode
  children?: ReactNode
  action?: ReactNode
}) {
  return (
    <div className="lk-alert" data-tone={tone} role={tone === 'error' ? 'alert' : 'status'}>
      {tone === 'warning' ? <WarningIcon /> : <AlertIcon />}
      <div className="lk-alert-body">
        {title ? <span className="lk-alert-title">{title}</span> : null}
        {children ? <span>{children}</span> : null}
        {action}
      </div>
    </div>
  )
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

export function Footer({ ui }: { ui: Ui }) {
  return (
    <p className="lk-footer">
      <ShieldIcon />
      {ui.t('securedBy')}
    </p>
  )
}
