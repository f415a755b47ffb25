import { OAUTH_METHODS, type OAuthMethod } from '@latchkey/protocol'
import { lazy, Suspense, useEffect, useId, useRef, useState } from 'react'
import { type ReservedOAuthPopup, reserveOAuthPopup } from '../../core/actions/auth/openOAuthPopup.ts'
import type { LinkedLogin } from '../../core/actions/queries/getLinkedLogins.ts'
import type { MfaRequiredError } from '../../core/errors.ts'
import {
  useAddPasskey,
  useLinkedLogins,
  useLinkOAuth,
  useUnlinkLogin,
  useWalletKitConfig,
} from '../../react/index.ts'
import { PROVIDER_MARK, PROVIDER_NAME } from '../auth/providers.tsx'
import { joinStrings } from '../i18n/joinStrings.ts'
import { loginsStrings } from '../i18n/sections/logins.ts'
import { isMfaRequired, LazyStepUp } from '../mfa/LazyStepUp.tsx'
import { Alert } from '../ui/Alert.tsx'
import { ConfirmStep } from '../ui/ConfirmStep.tsx'
import { ErrorText, MessageText } from '../ui/ErrorText.tsx'
import { errorCodeOf } from '../ui/errorMessage.ts'
import { LoadFailed, Loading } from '../ui/feedback.tsx'
import { ExternalIcon, MailIcon, PasskeyIcon, PhoneIcon, PlusIcon, WalletIcon } from '../ui/icons.tsx'
import { Button, Spinner } from '../ui/parts.tsx'
import type { UiOptions } from '../ui/uiOptions.ts'
import { uiStrings } from '../ui/uiStrings.ts'
import { type Ui, useUi } from '../ui/useUi.ts'

const strings = /* @__PURE__ */ joinStrings(uiStrings, loginsStrings)
type Keys = keyof typeof strings.en

// The e-mail form loads only when the user asks to link an address.
const LinkEmailForm = lazy(() => import('./LinkEmailForm.tsx').then((m) => ({ default: m.LinkEmailForm })))

export interface LinkedLoginsProps extends UiOptions {
  /** Offer "Link a passkey". @default true */
  allowPasskey?: boolean
  /** Offer "Link an email" when the account has none. @default true */
  allowEmail?: boolean
  /**
   * Offer "Link Google" (…) for the OAuth providers `wallet_kit_config` enables and the account
   * has none of yet; a list keeps only those. @default true
   */
  allowOAuth?: boolean | readonly OAuthMethod[]
  /** Called after a login is unlinked. */
  onUnlinked?: ((login: LinkedLogin) => void) | undefined
  className?: string | undefined
}

/**
 * Every way into the signed-in user's account (e-mail, phone, OAuth providers, passkeys, wallets,
 * API keys), each with "Unlink" after a confirmation, plus "Link a passkey", "Link an email"
 * (proven by a code, so the address ends verified) and "Link Google" (…) for each OAuth provider
 * the app enables (the provider's window; an identity another account holds is refused in words).
 * The service refuses to remove the last way in; that refusal is shown in words. An MFA policy on
 * the user shows the step-up, then finishes.
 */
export function LinkedLogins(props: LinkedLoginsProps) {
  return (
    <Suspense fallback={null}>
      <LinkedLoginsInner {...props} />
    </Suspense>
  )
}

type Notice = { text: string }
type Waiting = { challenge: MfaRequiredError<unknown>; done: string }
type Failure = { error: unknown; message?: string | undefined }

/** The sign-in method an OAuth identity's `providerName` names (`OAUTH2_PROVIDER_GOOGLE`, `google`). */
function oauthMethodOf(providerName: string): OAuthMethod | undefined {
  const name = providerName.toLowerCase().replace(/^oauth2_provider_/, '')
  return OAUTH_METHODS.find((method) => method === name)
}

function LinkedLoginsInner({
  allowPasskey = true,
  allowEmail = true,
  allowOAuth = true,
  onUnlinked,
  className,
  ...look
}: LinkedLoginsProps) {
  const ui = useUi(look, strings)
  const titleId = useId()
  const logins = useLinkedLogins()
  const unlink = useUnlinkLogin()
  const addPasskey = useAddPasskey()
  const linkOAuth = useLinkOAuth()
  const kitConfig = useWalletKitConfig({ query: { enabled: allowOAuth !== false } })
  const [confirming, setConfirming] = useState<LinkedLogin | null>(null)
  const [waiting, setWaiting] = useState<Waiting | null>(null)
  const [linkingEmail, setLinkingEmail] = useState(false)
  const [notice, setNotice] = useState<Notice | null>(null)
  const [failure, setFailure] = useState<Failure | null>(null)
  const error = failure?.error ?? null
  const setError = (caught: unknown, message?: string) =>
    setFailure(caught === null ? null : { error: caught, message })
  // A cancelled provider window: focus goes back to the button that opened it.
  const [refocus, setRefocus] = useState<OAuthMethod | null>(null)
  // The provider whose popup the browser blocked: "Open the … window" offers it from a click.
  const [blocked, setBlocked] = useState<OAuthMethod | null>(null)
  const blockedButton = useRef<HTMLButtonElement>(null)
  const oauthButtons = useRef(new Map<OAuthMethod, HTMLButtonElement>())
  const noticeRef = useRef<HTMLParagraphElement>(null)
  const errorRef = useRef<HTMLDivElement>(null)
  const unlinkButtons = useRef(new Map<string, HTMLButtonElement>())
  const root = {
    ...ui.rootProps,
    className: `${ui.rootProps.className} lk-card${className ? ` ${className}` : ''}`,
    'aria-labelledby': titleId,
  }

  // Focus follows each step: the confirmation's "Yes" (ConfirmStep), then the outcome (or the refusal).
  useEffect(() => {
    if (notice) noticeRef.current?.focus()
  }, [notice])
  useEffect(() => {
    if (error) errorRef.current?.focus()
  }, [error])
  useEffect(() => {
    if (blocked) blockedButton.current?.focus()
  }, [blocked])
  useEffect(() => {
    if (refocus && !linkOAuth.isPending) {
      oauthButtons.current.get(refocus)?.focus()
      setRefocus(null)
    }
  }, [refocus, linkOAuth.isPending])

  const nameOf = (login: LinkedLogin) =>
    login.kind === 'oauth'
      ? kindName(ui, login)
      : login.kind === 'passkey'
        ? login.label
        : login.label || kindName(ui, login)

  const cancelConfirm = (login: LinkedLogin) => {
    setConfirming(null)
    unlinkButtons.current.get(`${login.kind}:${login.id}`)?.focus()
  }
  const finished = (text: string) => {
    setWaiting(null)
    setError(null)
    setNotice({ text })
  }
  const failed = (caught: unknown, done: string) => {
    if (isMfaRequired(caught)) setWaiting({ challenge: caught, done })
    else setError(caught)
  }

  const doUnlink = async (login: LinkedLogin) => {
    setConfirming(null)
    setNotice(null)
    setError(null)
    const done = ui.t('loginUnlinked', { name: nameOf(login) })
    try {
      await unlink.mutateAsync({ login })
      finished(done)
      onUnlinked?.(login)
    } catch (caught) {
      failed(caught, done)
    }
  }
  /**
   * Links `method` in the provider's window: the default popup, or `reserved`, one opened during the
   * click on "Open the … window" (after the default one was blocked, as the sign-in offers).
   */
  const doLinkOAuth = async (method: OAuthMethod, reserved?: ReservedOAuthPopup) => {
    setNotice(null)
    setError(null)
    setBlocked(null)
    const provider = ui.t(PROVIDER_NAME[method])
    const done = ui.t('loginLinked', { name: provider })
    try {
      await linkOAuth.mutateAsync({ provider: method, openAuthorizationWindow: reserved })
      finished(done)
    } catch (caught) {
      const code = errorCodeOf(caught)
      // The window was closed, or the person said no at the provider: nothing changed.
      if (code === 'USER_CANCELLED' || code === 'ABORTED') setRefocus(method)
      else if (code === 'ALREADY_EXISTS') setError(caught, ui.t('loginOAuthTaken', { provider }))
      else if (code === 'POPUP_BLOCKED') setBlocked(method)
      else failed(caught, done)
    } finally {
      reserved?.close()
    }
  }
  /** "Open the Google window": the popup opens in this click, before the request is built. */
  const openBlocked = (method: OAuthMethod) => {
    let reserved: ReservedOAuthPopup
    try {
      reserved = reserveOAuthPopup()
    } catch (caught) {
      // Pop-ups are off for this site even from a click: say how to allow them.
      setBlocked(null)
      setError(caught, ui.t('loginOAuthBlocked', { provider: ui.t(PROVIDER_NAME[method]) }))
      return
    }
    void doLinkOAuth(method, reserved)
  }
  const doAddPasskey = async () => {
    setNotice(null)
    setError(null)
    const done = ui.t('loginLinked', { name: ui.t('loginPasskey') })
    try {
      await addPasskey.mutateAsync(undefined)
      finished(done)
    } catch (caught) {
      failed(caught, done)
    }
  }

  const heading = (
    <h2 className="lk-card-title" id={titleId}>
      {ui.t('loginsTitle')}
    </h2>
  )
  if (logins.isPending)
    return (
      <section {...root}>
        {heading}
        <Loading ui={ui} />
      </section>
    )
  if (logins.isError || !logins.data)
    return (
      <section {...root}>
        {heading}
        <LoadFailed ui={ui} error={logins.error} retry={() => void logins.refetch()} />
      </section>
    )

  const list = logins.data.logins
  const hasEmail = list.some((login) => login.kind === 'email')
  const busy = unlink.isPending || addPasskey.isPending || linkOAuth.isPending || waiting !== null
  // The providers the app enables (and has a client id for), less those already linked.
  const linked = new Set(
    list.flatMap((login) => (login.kind === 'oauth' ? [oauthMethodOf(login.label)] : [])),
  )
  const kit = kitConfig.data
  const linkable = OAUTH_METHODS.filter(
    (method) =>
      (allowOAuth === true || (allowOAuth !== false && allowOAuth.includes(method))) &&
      kit?.enabledProviders.includes(method) &&
      kit.oauthClientIds?.[method] &&
      !linked.has(method),
  )
  const linkingWith = linkOAuth.isPending ? linkOAuth.variables?.provider : undefined
  return (
    <section {...root} data-lk-logins="">
      {heading}
      {list.length === 0 ? (
        <p className="lk-subtle" style={{ margin: 0 }}>
          {ui.t('loginsEmpty')}
        </p>
      ) : (
        <ul className="lk-list">
          {list.map((login) => {
            const key = `${login.kind}:${login.id}`
            const name = nameOf(login)
            return (
              <li key={key} data-lk-login={login.kind} style={{ flexWrap: 'wrap' }}>
                <KindIcon login={login} />
                <span className="lk-grow" style={{ minWidth: 0, overflowWrap: 'anywhere' }}>
                  <span className="lk-strong">{kindName(ui, login)}</span>{' '}
                  <span className="lk-subtle" dir="auto">
                    {login.kind === 'oauth' ? new URL(login.issuer, 'https://x').host : login.label}
                  </span>
                </span>
                <button
                  ref={(element) => {
                    if (element) unlinkButtons.current.set(key, element)
                    else unlinkButtons.current.delete(key)
                  }}
                  type="button"
                  className="lk-button"
                  data-variant="secondary"
                  data-size="sm"
                  aria-label={ui.t('loginUnlinkLabel', { name })}
                  aria-expanded={confirming === login}
                  disabled={busy}
                  onClick={() => {
                    setNotice(null)
                    setError(null)
                    setConfirming(login)
                  }}
                >
                  {ui.t('loginUnlink')}
                </button>
                {confirming === login ? (
                  <ConfirmStep
                    ui={ui}
                    question={ui.t('loginUnlinkConfirm', { name })}
                    confirm={ui.t('loginUnlinkYes')}
                    onConfirm={() => void doUnlink(login)}
                    onCancel={() => cancelConfirm(login)}
                  />
                ) : null}
              </li>
            )
          })}
        </ul>
      )}
      {waiting ? (
        <LazyStepUp
          ui={ui}
          challenge={waiting.challenge}
          onDone={() => finished(waiting.done)}
          onCancel={() => setWaiting(null)}
        />
      ) : null}
      <div aria-live="polite">
        {linkingWith ? (
          <p className="lk-row lk-subtle" style={{ margin: 0 }}>
            <Spinner />
            {ui.t('oauthWaiting', { provider: ui.t(PROVIDER_NAME[linkingWith]) })}
          </p>
        ) : null}
        {notice ? (
          <p ref={noticeRef} tabIndex={-1} className="lk-subtle" style={{ margin: 0 }}>
            {notice.text}
          </p>
        ) : null}
      </div>
      {blocked ? (
        <Alert
          tone="warning"
          title={ui.t('oauthBlockedTitle')}
          action={
            <span className="lk-row" data-wrap="">
              <button
                ref={blockedButton}
                type="button"
                className="lk-button"
                data-variant="secondary"
                data-size="sm"
                disabled={busy}
                onClick={() => openBlocked(blocked)}
              >
                <ExternalIcon size={16} />
                {ui.t('loginOAuthOpen', { provider: ui.t(PROVIDER_NAME[blocked]) })}
              </button>
              <Button
                size="sm"
                variant="ghost"
                onClick={() => {
                  setBlocked(null)
                  setRefocus(blocked)
                }}
              >
                {ui.t('cancel')}
              </Button>
            </span>
          }
        >
          {ui.t('loginOAuthBlockedBody', { provider: ui.t(PROVIDER_NAME[blocked]) })}
        </Alert>
      ) : null}
      <div aria-live="assertive" ref={errorRef} tabIndex={-1}>
        {error ? (
          <Alert tone="error">
            {failure?.message !== undefined ? (
              <MessageText text={failure.message} />
            ) : errorCodeOf(error) === 'FIELD_INVALID' ? (
              <MessageText text={ui.t('loginLastWayIn')} />
            ) : (
              <ErrorText ui={ui} error={error} />
            )}
          </Alert>
        ) : null}
      </div>
      {linkingEmail ? (
        <Suspense fallback={<Spinner />}>
          <LinkEmailForm
            ui={ui}
            onCancel={() => setLinkingEmail(false)}
            onLinked={(email) => {
              setLinkingEmail(false)
              finished(ui.t('loginLinked', { name: email }))
            }}
            onChallenge={(challenge, email) =>
              setWaiting({ challenge, done: ui.t('loginLinked', { name: email }) })
            }
          />
        </Suspense>
      ) : null}
      <div className="lk-row" style={{ flexWrap: 'wrap' }}>
        {allowPasskey ? (
          <Button
            size="sm"
            variant="secondary"
            loading={addPasskey.isPending}
            disabled={busy}
            onClick={() => void doAddPasskey()}
          >
            <PlusIcon />
            {ui.t('addPasskey')}
          </Button>
        ) : null}
        {allowEmail && !hasEmail && !linkingEmail ? (
          <Button
            size="sm"
            variant="secondary"
            disabled={busy}
            onClick={() => {
              setNotice(null)
              setError(null)
              setLinkingEmail(true)
            }}
          >
            <PlusIcon />
            {ui.t('loginLinkEmail')}
          </Button>
        ) : null}
        {linkable.map((method) => (
          <button
            key={method}
            ref={(element) => {
              if (element) oauthButtons.current.set(method, element)
              else oauthButtons.current.delete(method)
            }}
            type="button"
            className="lk-button"
            data-variant="secondary"
            data-size="sm"
            aria-busy={linkingWith === method || undefined}
            disabled={busy}
            onClick={() => void doLinkOAuth(method)}
          >
            {linkingWith === method ? <Spinner /> : <PlusIcon />}
            {ui.t('loginLinkOAuth', { provider: ui.t(PROVIDER_NAME[method]) })}
          </button>
        ))}
      </div>
    </section>
  )
}

function kindName(ui: Ui<Keys>, login: LinkedLogin): string {
  switch (login.kind) {
    case 'email':
      return ui.t('emailRow')
    case 'phone':
      return ui.t('phoneRow')
    case 'oauth': {
      const method = oauthMethodOf(login.label)
      return method ? ui.t(PROVIDER_NAME[method]) : login.label
    }
    case 'passkey':
      return ui.t('loginPasskey')
    case 'wallet':
      return ui.t('loginWallet')
    default:
      return ui.t('loginApiKey')
  }
}

function KindIcon({ login }: { login: LinkedLogin }) {
  const { kind } = login
  const method = kind === 'oauth' ? oauthMethodOf(login.label) : undefined
  if (method) {
    const Mark = PROVIDER_MARK[method]
    return (
      <span className="lk-method-icon">
        <Mark />
      </span>
    )
  }
  if (kind === 'email') return <MailIcon size={18} />
  if (kind === 'phone') return <PhoneIcon size={18} />
  if (kind === 'passkey') return <PasskeyIcon size={18} />
  return <WalletIcon size={18} />
}
