import { Suspense, useEffect, useState } from 'react'
import { useLogout, useRefreshSession, useSessionState } from '../../react/index.ts'
import { joinStrings } from '../i18n/joinStrings.ts'
import { sessionStrings } from '../i18n/sections/session.ts'
import { Alert } from '../ui/Alert.tsx'
import { ErrorText } from '../ui/ErrorText.tsx'
import { formatCountdown } from '../ui/formatDuration.ts'
import { Button } from '../ui/parts.tsx'
import type { UiOptions } from '../ui/uiOptions.ts'
import { uiStrings } from '../ui/uiStrings.ts'
import { useUi } from '../ui/useUi.ts'

const strings = /* @__PURE__ */ joinStrings(uiStrings, sessionStrings)

export interface SessionStatusProps extends UiOptions {
  /** Called when the person asks to sign in again (expired or signed out). */
  onSignIn?: () => void
  /**
   * Its own "Sign out" button; `false` when the page already has one (say, in its header), so a
   * person never meets two sign-out controls side by side.
   * @default true
   */
  showSignOut?: boolean
  className?: string
}

const TONE = { active: 'success', expiring: 'warning', expired: 'danger', 'storage-lost': 'danger' } as const

/** The active session: state, a live expiry countdown, "stay signed in" and sign out. */
export function SessionStatus(props: SessionStatusProps) {
  return (
    <Suspense fallback={null}>
      <SessionStatusInner {...props} />
    </Suspense>
  )
}

function SessionStatusInner({ onSignIn, showSignOut = true, className, ...look }: SessionStatusProps) {
  const ui = useUi(look, strings)
  // The active session in any state: this card is where an ended one is shown as such.
  const session = useSessionState((state) => state.sessions[state.activeId ?? ''])
  const refresh = useRefreshSession()
  const logout = useLogout()
  const [now, setNow] = useState(() => Date.now())
  const expiresAt = session?.expiresAt
  // Only this component ticks; the session store changes only on real transitions.
  useEffect(() => {
    if (!expiresAt) return
    setNow(Date.now())
    const timer = setInterval(() => setNow(Date.now()), 1000)
    return () => clearInterval(timer)
  }, [expiresAt])

  const status = session?.status ?? 'signed-out'
  const label =
    status === 'active'
      ? ui.t('sessionActive')
      : status === 'expiring'
        ? ui.t('sessionExpiring')
        : status === 'expired'
          ? ui.t('sessionExpired')
          : status === 'storage-lost'
            ? ui.t('sessionStorageLost')
            : ui.t('sessionSignedOut')
  const usable = status === 'active' || status === 'expiring'
  const readOnly = session?.sessionType === 'SESSION_TYPE_READ_ONLY'

  return (
    <section
      {...ui.rootProps}
      className={`${ui.rootProps.className} lk-card${className ? ` ${className}` : ''}`}
      aria-label={label}
      style={{ ...ui.rootProps.style, gap: 12 }}
    >
      <div className="lk-row" data-justify="between" data-wrap="">
        <div className="lk-row lk-grow">
          <span
            className="lk-badge"
            data-tone={status === 'signed-out' ? undefined : TONE[status]}
            role="status"
          >
            <span className="lk-dot" aria-hidden="true" />
            {label}
          </span>
          {readOnly ? <span className="lk-badge">{ui.t('sessionReadOnly')}</span> : null}
        </div>
        {usable && expiresAt ? (
          <span className="lk-subtle">
            {ui.t('sessionExpiresIn', { time: formatCountdown(expiresAt - now, ui.locale) })}
          </span>
        ) : null}
      </div>
      {session?.label ? <span className="lk-mono lk-muted">{session.label}</span> : null}
      {refresh.isError ? (
        <Alert tone="error">
          <ErrorText ui={ui} error={refresh.error} />
        </Alert>
      ) : null}
      {logout.isError ? (
        <Alert tone="error">
          <ErrorText ui={ui} error={logout.error} />
        </Alert>
      ) : null}
      <div className="lk-row" data-wrap="">
        {usable && !readOnly ? (
          <Button
            size="sm"
            variant="secondary"
            loading={refresh.isPending}
            onClick={() => refresh.mutate({})}
          >
            {refresh.isPending ? ui.t('sessionRefreshing') : ui.t('sessionRefresh')}
          </Button>
        ) : null}
        {session && showSignOut ? (
          <Button size="sm" variant="ghost" loading={logout.isPending} onClick={() => logout.mutate({})}>
            {ui.t('logOut')}
          </Button>
        ) : null}
        {!usable && onSignIn ? (
          <Button size="sm" onClick={onSignIn}>
            {session ? ui.t('sessionSignInAgain') : ui.t('signIn')}
          </Button>
        ) : null}
      </div>
    </section>
  )
}
