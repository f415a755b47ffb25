import { type FormEvent, Suspense, useEffect, useId, useState } from 'react'
import type { MfaRequiredError } from '../../core/errors.ts'
import {
  useAddPasskey,
  useLogout,
  useRemovePasskey,
  useSessionState,
  useSessions,
  useSwitchSession,
  useUpdateUserName,
  useUser,
} from '../../react/index.ts'
import { joinStrings } from '../i18n/joinStrings.ts'
import { profileStrings } from '../i18n/sections/profile.ts'
import { isMfaRequired, LazyStepUp } from '../mfa/LazyStepUp.tsx'
import { Alert } from '../ui/Alert.tsx'
import { ErrorText } from '../ui/ErrorText.tsx'
import { LoadFailed, Loading } from '../ui/feedback.tsx'
import { formatDateTime } from '../ui/formatDuration.ts'
import { PasskeyIcon, PlusIcon, TrashIcon } from '../ui/icons.tsx'
import { Button } from '../ui/parts.tsx'
import type { UiOptions } from '../ui/uiOptions.ts'
import { uiStrings } from '../ui/uiStrings.ts'
import { type Ui, useUi } from '../ui/useUi.ts'

const strings = /* @__PURE__ */ joinStrings(uiStrings, profileStrings)
type Keys = keyof typeof strings.en

export interface UserProfileProps extends UiOptions {
  /**
   * Its "Active sessions" list (switch, sign out of one); `false` when the page lists the
   * browser's sessions elsewhere (`useSessions()`), so they are not shown twice.
   * @default true
   */
  showSessions?: boolean
  className?: string
}

/** The signed-in user: name, e-mail, phone, passkeys, connected accounts and active sessions. */
export function UserProfile(props: UserProfileProps) {
  return (
    <Suspense fallback={null}>
      <UserProfileInner {...props} />
    </Suspense>
  )
}

function UserProfileInner({ showSessions = true, className, ...look }: UserProfileProps) {
  const ui = useUi(look, strings)
  const titleId = useId()
  const user = useUser()
  const root = {
    ...ui.rootProps,
    className: `${ui.rootProps.className} lk-card${className ? ` ${className}` : ''}`,
    'aria-labelledby': titleId,
  }
  const heading = (
    <h2 className="lk-card-title" id={titleId}>
      {ui.t('profileTitle')}
    </h2>
  )
  if (user.isPending)
    return (
      <section {...root}>
        {heading}
        <Loading ui={ui} />
      </section>
    )
  if (user.isError || !user.data)
    return (
      <section {...root}>
        {heading}
        <LoadFailed ui={ui} error={user.error} retry={() => void user.refetch()} />
      </section>
    )
  const { user: u } = user.data
  return (
    <section {...root}>
      <div className="lk-row">
        <span className="lk-avatar" aria-hidden="true">
          {(u.userName || '?').trim().charAt(0).toUpperCase()}
        </span>
        <div className="lk-grow">
          {heading}
          <span className="lk-subtle lk-mono">{u.userEmail ?? u.userPhoneNumber ?? u.userId}</span>
        </div>
      </div>
      <NameForm ui={ui} userId={u.userId} name={u.userName} />
      <dl className="lk-kv">
        <dt>{ui.t('emailRow')}</dt>
        <dd>{u.userEmail ?? <span className="lk-subtle">{ui.t('notSet')}</span>}</dd>
        <dt>{ui.t('phoneRow')}</dt>
        <dd>
          {u.userPhoneNumber ? (
            <span className="lk-mono">{u.userPhoneNumber}</span>
          ) : (
            <span className="lk-subtle">{ui.t('notSet')}</span>
          )}
        </dd>
      </dl>
      <Passkeys ui={ui} userId={u.userId} authenticators={u.authenticators} />
      <div className="lk-stack" data-gap="sm">
        <h3 className="lk-section-title">{ui.t('providersTitle')}</h3>
        {u.oauthProviders.length === 0 ? (
          <p className="lk-subtle" style={{ margin: 0 }}>
            {ui.t('providersEmpty')}
          </p>
        ) : (
          <ul className="lk-list">
            {u.oauthProviders.map((p) => (
              <li key={p.providerId}>
                <span className="lk-strong lk-grow">{p.providerName}</span>
                <span className="lk-subtle lk-mono">{new URL(p.issuer, 'https://x').host}</span>
              </li>
            ))}
          </ul>
        )}
      </div>
      {showSessions ? <Sessions ui={ui} /> : null}
    </section>
  )
}

function NameForm({ ui, userId, name }: { ui: Ui<Keys>; userId: string; name: string }) {
  const id = useId()
  const update = useUpdateUserName()
  const [value, setValue] = useState(name)
  useEffect(() => setValue(name), [name])
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (value.trim() && value.trim() !== name) update.mutate({ userId, userName: value.trim() })
  }
  return (
    <form className="lk-field" onSubmit={submit}>
      <label className="lk-label" htmlFor={`${id}-name`}>
        {ui.t('nameLabel')}
      </label>
      <div className="lk-row">
        <input
          id={`${id}-name`}
          className="lk-input lk-grow"
          value={value}
          maxLength={64}
          autoComplete="name"
          onChange={(event) => setValue(event.target.value)}
        />
        <Button type="submit" variant="secondary" loading={update.isPending} disabled={value.trim() === name}>
          {update.isPending ? ui.t('saving') : ui.t('save')}
        </Button>
      </div>
      <div aria-live="polite">
        {update.isSuccess && value.trim() === name ? (
          <span className="lk-subtle">{ui.t('nameSaved')}</span>
        ) : null}
      </div>
      {update.isError ? (
        <Alert tone="error">
          <ErrorText ui={ui} error={update.error} />
        </Alert>
      ) : null}
    </form>
  )
}

function Passkeys({
  ui,
  userId,
  authenticators,
}: {
  ui: Ui<Keys>
  userId: string
  authenticators: { authenticatorId: string; authenticatorName: string; createdAt: { seconds: string } }[]
}) {
  const add = useAddPasskey()
  const remove = useRemovePasskey()
  // An MFA policy on the user holds the change: the step-up, then it finishes.
  const [challenge, setChallenge] = useState<MfaRequiredError<unknown> | null>(null)
  const held = (caught: unknown) => {
    if (isMfaRequired(caught)) setChallenge(caught)
  }
  return (
    <div className="lk-stack" data-gap="sm">
      <div className="lk-row" data-justify="between">
        <h3 className="lk-section-title">{ui.t('passkeysTitle')}</h3>
        <Button
          size="sm"
          variant="secondary"
          loading={add.isPending}
          onClick={() => void add.mutateAsync({ userId }).catch(held)}
        >
          <PlusIcon />
          {ui.t('addPasskey')}
        </Button>
      </div>
      {authenticators.length === 0 ? (
        <p className="lk-subtle" style={{ margin: 0 }}>
          {ui.t('passkeysEmpty')}
        </p>
      ) : (
        <ul className="lk-list">
          {authenticators.map((a) => (
            <li key={a.authenticatorId}>
              <PasskeyIcon size={18} />
              <span className="lk-grow">
                <span className="lk-strong">{a.authenticatorName}</span>{' '}
                <span className="lk-subtle">
                  {formatDateTime(Number(a.createdAt.seconds) * 1000, ui.locale)}
                </span>
              </span>
              <button
                type="button"
                className="lk-icon-button"
                aria-label={ui.t('removePasskey', { name: a.authenticatorName })}
                disabled={remove.isPending}
                onClick={() =>
                  void remove.mutateAsync({ userId, authenticatorIds: [a.authenticatorId] }).catch(held)
                }
              >
                <TrashIcon />
              </button>
            </li>
          ))}
        </ul>
      )}
      {challenge ? (
        <LazyStepUp
          ui={ui}
          challenge={challenge}
          onDone={() => setChallenge(null)}
          onCancel={() => setChallenge(null)}
        />
      ) : null}
      {add.isError && !isMfaRequired(add.error) ? (
        <Alert tone="error">
          <ErrorText ui={ui} error={add.error} />
        </Alert>
      ) : null}
      {remove.isError && !isMfaRequired(remove.error) ? (
        <Alert tone="error">
          <ErrorText ui={ui} error={remove.error} />
        </Alert>
      ) : null}
    </div>
  )
}

function Sessions({ ui }: { ui: Ui<Keys> }) {
  const sessions = useSessions()
  // The active session even once it has ended: it stays marked as this one in the list.
  const activeId = useSessionState((state) => state.activeId)
  const logout = useLogout()
  const switchTo = useSwitchSession()
  const list = Object.values(sessions)
  return (
    <div className="lk-stack" data-gap="sm">
      <h3 className="lk-section-title">{ui.t('sessionsTitle')}</h3>
      {list.length === 0 ? (
        <p className="lk-subtle" style={{ margin: 0 }}>
          {ui.t('sessionsEmpty')}
        </p>
      ) : (
        <ul className="lk-list">
          {list.map((s) => {
            const name = s.label ?? s.userId
            return (
              <li key={s.id}>
                {/* Wide enough for the address; on narrow screens the buttons wrap below it. */}
                <span className="lk-grow" data-basis="text">
                  <span className="lk-mono">{name}</span>{' '}
                  {s.id === activeId ? (
                    <span className="lk-badge" data-tone="accent">
                      {ui.t('thisSession')}
                    </span>
                  ) : null}
                  <br />
                  <span className="lk-subtle">
                    {ui.t('sessionExpiresAt', { time: formatDateTime(s.expiresAt, ui.locale) })}
                  </span>
                </span>
                {s.id === activeId ? null : (
                  <Button size="sm" variant="ghost" onClick={() => switchTo(s.id)}>
                    {ui.t('useSession')}
                  </Button>
                )}
                <Button
                  size="sm"
                  variant="secondary"
                  aria-label={ui.t('logOutSession', { name })}
                  onClick={() => logout.mutate({ sessionId: s.id })}
                >
                  {ui.t('logOut')}
                </Button>
              </li>
            )
          })}
        </ul>
      )}
      {logout.isError ? (
        <Alert tone="error">
          <ErrorText ui={ui} error={logout.error} />
        </Alert>
      ) : null}
    </div>
  )
}
