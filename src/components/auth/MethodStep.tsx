import { OAUTH_METHODS, type OAuthMethod, type SignInMethod } from '@latchkey/protocol'
import { type FormEvent, lazy, Suspense, useEffect, useId, useState } from 'react'
import { useSessionStatus } from '../../react/index.ts'
import { Alert } from '../ui/Alert.tsx'
import { ErrorText } from '../ui/ErrorText.tsx'
import { errorCodeOf } from '../ui/errorMessage.ts'
import { Footer } from '../ui/Footer.tsx'
import { ChevronIcon, LockIcon, PasskeyIcon, WalletIcon } from '../ui/icons.tsx'
import { Button, Header, Spinner } from '../ui/parts.tsx'
import { useAuthFlowContext } from './AuthFlowContext.ts'
import { CaptchaField, focusCaptcha } from './CaptchaField.tsx'
import type { PhoneValue } from './PhoneField.tsx'
import { PROVIDER_MARK, PROVIDER_NAME } from './providers.tsx'

const PhoneField = lazy(() => import('./PhoneField.tsx'))
const isOAuth = (m: SignInMethod): m is OAuthMethod => (OAUTH_METHODS as readonly string[]).includes(m)
// Loose on purpose: the service validates for real; this only catches obvious typos early.
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/**
 * Sends the code. While a CAPTCHA is unsolved it says so instead of "Continue" and stays
 * focusable (`aria-disabled`), pointing to the check when pressed.
 */
function SendButton({ waitingForCaptcha }: { waitingForCaptcha: boolean }) {
  const flow = useAuthFlowContext()
  const { ui } = flow
  return (
    <Button
      type="submit"
      block
      loading={flow.busy && flow.step.name === 'methods'}
      aria-disabled={waitingForCaptcha || undefined}
    >
      {flow.busy ? ui.t('otpSending') : waitingForCaptcha ? ui.t('captchaWaiting') : ui.t('continue')}
    </Button>
  )
}

/** The service's refusal of a number from a country it does not send SMS codes to (`[sms] allowed_countries`). */
const isCountryNotServed = (error: unknown): boolean =>
  Array.isArray((error as { details?: { allowedCountries?: unknown } }).details?.allowedCountries)

/** The e-mail field: sends a code and moves to the code step. */
export function EmailStep() {
  const flow = useAuthFlowContext()
  const { ui } = flow
  const id = useId()
  const [email, setEmail] = useState('')
  const [invalid, setInvalid] = useState(false)
  const waitingForCaptcha = Boolean(flow.captcha && !flow.captcha.token)
  const submit = (event: FormEvent<HTMLElement>) => {
    event.preventDefault()
    const value = email.trim()
    if (!EMAIL_PATTERN.test(value)) return setInvalid(true)
    setInvalid(false)
    if (waitingForCaptcha) return focusCaptcha(event.currentTarget)
    void flow.startOtp('email', value)
  }
  return (
    <form className="lk-stack" onSubmit={submit} noValidate>
      <div className="lk-field">
        <label className="lk-label" htmlFor={`${id}-email`}>
          {ui.t('emailLabel')}
        </label>
        <input
          id={`${id}-email`}
          className="lk-input"
          type="email"
          dir="ltr"
          inputMode="email"
          autoComplete="email"
          // biome-ignore lint/a11y/noAutofocus: the dialog opens to sign in; this is the first field
          autoFocus
          data-lk-autofocus=""
          placeholder={ui.t('emailPlaceholder')}
          value={email}
          disabled={flow.busy}
          aria-invalid={invalid || undefined}
          aria-describedby={invalid ? `${id}-error` : undefined}
          onChange={(event) => {
            setEmail(event.target.value)
            if (invalid) setInvalid(false)
          }}
        />
        {invalid ? (
          <p className="lk-field-error" id={`${id}-error`} role="alert">
            {ui.t('emailInvalid')}
          </p>
        ) : null}
      </div>
      <CaptchaField />
      <SendButton waitingForCaptcha={waitingForCaptcha} />
    </form>
  )
}

/** The phone field with country selection (metadata loaded on demand), producing E.164. */
export function PhoneStep() {
  const flow = useAuthFlowContext()
  const { ui } = flow
  const errorId = useId()
  const [value, setValue] = useState<PhoneValue | null>(null)
  const [invalid, setInvalid] = useState(false)
  const waitingForCaptcha = Boolean(flow.captcha && !flow.captcha.token)
  const submit = (event: FormEvent<HTMLElement>) => {
    event.preventDefault()
    if (!value?.e164) return setInvalid(true)
    setInvalid(false)
    if (waitingForCaptcha) return focusCaptcha(event.currentTarget)
    void flow.startOtp('sms', value.e164)
  }
  return (
    <form className="lk-stack" onSubmit={submit} noValidate>
      <Suspense
        fallback={
          <p className="lk-row lk-muted" style={{ margin: 0, minBlockSize: 70 }}>
            <Spinner />
            {ui.t('loading')}
          </p>
        }
      >
        <PhoneField
          ui={ui}
          value={value}
          disabled={flow.busy}
          invalid={invalid}
          errorId={errorId}
          onChange={(next) => {
            setValue(next)
            if (invalid) setInvalid(false)
          }}
        />
      </Suspense>
      {invalid ? (
        <p className="lk-field-error" id={errorId} role="alert">
          {ui.t('phoneInvalid')}
        </p>
      ) : null}
      <CaptchaField />
      <SendButton waitingForCaptcha={waitingForCaptcha} />
    </form>
  )
}

/** OAuth buttons with provider marks. */
export function OAuthButtons({ methods }: { methods: OAuthMethod[] }) {
  const flow = useAuthFlowContext()
  const { ui } = flow
  const compact = methods.length > 2
  return (
    <div className={compact ? 'lk-oauth-grid' : 'lk-stack'} data-gap="sm">
      {methods.map((method) => {
        const Mark = PROVIDER_MARK[method]
        const label = ui.t('continueWith', { provider: ui.t(PROVIDER_NAME[method]) })
        return (
          <button
            key={method}
            type="button"
            className="lk-method"
            disabled={flow.busy}
            aria-label={compact ? label : undefined}
            title={compact ? label : undefined}
            onClick={() => void flow.startOAuth(method)}
          >
            <span className="lk-method-icon">
              <Mark />
            </span>
            {compact ? null : <span className="lk-method-label">{label}</span>}
          </button>
        )
      })}
    </div>
  )
}

/** The first screen: every enabled method, in order. */
export function MethodStep() {
  const flow = useAuthFlowContext()
  const { prefetch } = flow
  // The next steps load in the background while the person types.
  useEffect(() => {
    const timer = setTimeout(() => prefetch?.(), 300)
    return () => clearTimeout(timer)
  }, [prefetch])
  const { ui, methods, config } = flow
  // Signing in again after the session ended: say why the form is back.
  const expired = useSessionStatus() === 'expired'
  const titleId = flow.titleId
  const descriptionId = useId()
  const channel = flow.step.name === 'methods' ? flow.step.channel : 'email'
  const hasEmail = methods.includes('email')
  const hasSms = methods.includes('sms')
  const others = methods.filter((m) => m !== 'email' && m !== 'sms')
  const oauth = others.filter(isOAuth)
  const header = (
    <Header
      ui={ui}
      titleId={titleId}
      title={ui.t('signInTitle')}
      descriptionId={descriptionId}
      description={config.status === 'success' && methods.length > 0 ? ui.t('signInDescription') : undefined}
      onClose={flow.cancel}
    />
  )

  if (config.status === 'pending') {
    return (
      <div className="lk-panel" aria-busy="true">
        {header}
        <div className="lk-center" style={{ minBlockSize: 160, justifyContent: 'center' }}>
          <Spinner size="lg" />
          <span className="lk-muted">{ui.t('loading')}</span>
        </div>
      </div>
    )
  }
  if (config.status === 'error' || methods.length === 0) {
    const disabled = errorCodeOf(config.error) === 'PROXY_DISABLED'
    return (
      <div className="lk-panel">
        {header}
        <div className="lk-center">
          <div className="lk-hero" data-tone="warning" aria-hidden="true">
            <LockIcon size={26} />
          </div>
          <div role={config.status === 'error' ? 'alert' : 'status'} className="lk-stack" data-gap="sm">
            <strong className="lk-strong">{ui.t('noMethodsTitle')}</strong>
            <span className="lk-muted">
              {config.status === 'success' ? (
                ui.t('noMethodsBody')
              ) : disabled ? (
                ui.t('proxyDisabledBody')
              ) : (
                <>
                  {ui.t('configErrorBody')} <ErrorText ui={ui} error={config.error} />
                </>
              )}
            </span>
          </div>
          {config.status === 'error' && !disabled ? (
            <Button variant="secondary" onClick={config.retry}>
              {ui.t('retry')}
            </Button>
          ) : null}
        </div>
      </div>
    )
  }

  const fieldChannel = hasEmail && hasSms ? channel : hasEmail ? 'email' : 'sms'
  let oauthPlaced = false
  return (
    <div className="lk-panel">
      {header}
      {expired && !flow.error ? <Alert tone="warning">{ui.t('sessionExpiredSignIn')}</Alert> : null}
      {flow.error ? (
        <Alert tone="error">
          {errorCodeOf(flow.error) === 'CONTACT_INVALID' && fieldChannel === 'sms' ? (
            ui.t(isCountryNotServed(flow.error) ? 'phoneCountryNotServed' : 'phoneInvalid')
          ) : (
            <ErrorText ui={ui} error={flow.error} />
          )}
        </Alert>
      ) : null}
      {hasEmail || hasSms ? (
        <div className="lk-stack" data-gap="sm">
          {fieldChannel === 'email' ? <EmailStep /> : <PhoneStep />}
          {hasEmail && hasSms ? (
            <button
              type="button"
              className="lk-link"
              style={{ alignSelf: 'center' }}
              onClick={() => flow.setChannel(fieldChannel === 'email' ? 'sms' : 'email')}
            >
              {fieldChannel === 'email' ? ui.t('usePhone') : ui.t('useEmail')}
            </button>
          ) : null}
        </div>
      ) : null}
      {(hasEmail || hasSms) && others.length > 0 ? (
        <div className="lk-divider" aria-hidden="true">
          {ui.t('or')}
        </div>
      ) : null}
      {others.length > 0 ? (
        <nav className="lk-stack" data-gap="sm" aria-label={ui.t('methodsLabel')}>
          {others.map((method) => {
            if (isOAuth(method)) {
              if (oauthPlaced) return null
              oauthPlaced = true
              return <OAuthButtons key="oauth" methods={oauth} />
            }
            if (method === 'passkey')
              return (
                <button
                  key={method}
                  type="button"
                  className="lk-method"
                  disabled={flow.busy}
                  onClick={() => void flow.startPasskey('sign-in')}
                >
                  <span className="lk-method-icon">
                    <PasskeyIcon />
                  </span>
                  <span className="lk-method-label">{ui.t('continueWithPasskey')}</span>
                  <ChevronIcon />
                </button>
              )
            return (
              <button
                key={method}
                type="button"
                className="lk-method"
                disabled={flow.busy}
                onClick={flow.openWallets}
              >
                <span className="lk-method-icon">
                  <WalletIcon />
                </span>
                <span className="lk-method-label">{ui.t('continueWithWallet')}</span>
                <ChevronIcon />
              </button>
            )
          })}
        </nav>
      ) : null}
      <Footer ui={ui} />
    </div>
  )
}
