import type { ReactNode } from 'react'
import { AlertIcon, WarningIcon } from './noticeIcons.tsx'

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
