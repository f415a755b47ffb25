import { type FormEvent, useId, useLayoutEffect, useRef, useState } from 'react'
import type { MfaRequiredError } from '../../core/errors.ts'
import { useLinkEmail } from '../../react/index.ts'
import { codeStrings } from '../i18n/sections/code.ts'
import { isMfaRequired } from '../mfa/LazyStepUp.tsx'
import { CodeField } from '../ui/CodeField.tsx'
import { errorCodeOf } from '../ui/errorMessage.ts'
import { ErrorRegion } from '../ui/feedback.tsx'
import { Button } from '../ui/parts.tsx'
import { useStrings } from '../ui/useStrings.ts'
import type { Ui, UiKey } from '../ui/useUi.ts'

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/**
 * `<LinkedLogins/>`'s "Link an email" (lazy chunk): the address, then the code sent to it. The
 * code is checked with the session key as the token's key, so the address ends verified.
 */
export function LinkEmailForm({
  ui: screen,
  onLinked,
  onCancel,
  onChallenge,
}: {
  ui: Ui<UiKey | 'loginSendCode'>
  onLinked: (email: string) => void
  onCancel: () => void
  /** An MFA policy holds the change: `<LinkedLogins/>` shows the step-up. */
  onChallenge: (challenge: MfaRequiredError<unknown>, email: string) => void
}) {
  // The code's strings come with this chunk.
  const ui = useStrings(screen, codeStrings)
  const { start, link } = useLinkEmail()
  const [email, setEmail] = useState('')
  const [sent, setSent] = useState<{ otpId: string; email: string } | null>(null)
  const [code, setCode] = useState('')
  const [error, setError] = useState<unknown>(null)
  const emailField = useRef<HTMLInputElement>(null)
  const codeField = useRef<HTMLInputElement>(null)
  const emailId = useId()
  const errorId = useId()

  // Focus follows the step: the address, then the code; back into the field after an error. Moved
  // as the field mounts, before the browser paints (a layout effect): after the lazy chunk loads a
  // passive effect ran a frame later, with focus left on <body> meanwhile.
  // biome-ignore lint/correctness/useExhaustiveDependencies: refocus on each step and each error
  useLayoutEffect(() => {
    ;(sent ? codeField.current : emailField.current)?.focus()
  }, [sent, error])

  const send = async (event?: FormEvent) => {
    event?.preventDefault()
    const address = (sent?.email ?? email).trim()
    if (!EMAIL.test(address)) return setError({ code: 'LINK_EMAIL_FORMAT' })
    setError(null)
    try {
      const started = await start.mutateAsync({ email: address })
      setCode('')
      setSent(started)
    } catch (caught) {
      setError(caught)
    }
  }
  const verify = async (event: FormEvent) => {
    event.preventDefault()
    if (!sent) return
    const text = code.trim()
    if (!/^[0-9A-Za-z]{6,9}$/.test(text)) return setError({ code: 'MFA_CONTACT_FORMAT' })
    setError(null)
    try {
      await link.mutateAsync({ otpId: sent.otpId, email: sent.email, otpCode: text })
      onLinked(sent.email)
    } catch (caught) {
      if (isMfaRequired(caught)) onChallenge(caught, sent.email)
      else setError(caught)
    }
  }

  const errorCode = errorCodeOf(error)
  const message =
    errorCode === 'LINK_EMAIL_FORMAT'
      ? ui.t('emailInvalid')
      : errorCode === 'MFA_CONTACT_FORMAT'
        ? ui.t('mfaContactFormat')
        : errorCode === 'OTP_INVALID'
          ? ui.t('mfaContactWrong')
          : undefined
  const busy = start.isPending || link.isPending
  const described = error ? errorId : undefined

  return (
    <div className="lk-stack" data-gap="sm" data-lk-link-email="">
      {sent === null ? (
        <form className="lk-stack" data-gap="sm" onSubmit={(event) => void send(event)} noValidate>
          <div className="lk-field">
            <label className="lk-label" htmlFor={emailId}>
              {ui.t('emailLabel')}
            </label>
            <input
              ref={emailField}
              id={emailId}
              className="lk-input"
              type="email"
              dir="ltr"
              autoComplete="email"
              placeholder={ui.t('emailPlaceholder')}
              value={email}
              maxLength={320}
              aria-invalid={error ? true : undefined}
              aria-describedby={described}
              onChange={(event) => setEmail(event.target.value)}
            />
          </div>
          <div className="lk-row" style={{ flexWrap: 'wrap' }}>
            <Button type="submit" size="sm" loading={start.isPending}>
              {ui.t('loginSendCode')}
            </Button>
            <Button size="sm" variant="ghost" disabled={busy} onClick={onCancel}>
              {ui.t('cancel')}
            </Button>
          </div>
        </form>
      ) : (
        <form className="lk-stack" data-gap="sm" onSubmit={(event) => void verify(event)} noValidate>
          <p className="lk-subtle" role="status" style={{ margin: 0, overflowWrap: 'anywhere' }}>
            {ui.t('mfaContactSent', { to: sent.email })}
          </p>
          <CodeField
            inputRef={codeField}
            label={ui.t('mfaContactCodeLabel')}
            kind="contact"
            value={code}
            onChange={setCode}
            error={error}
            errorId={errorId}
            disabled={busy}
          />
          <div className="lk-row" style={{ flexWrap: 'wrap' }}>
            <Button type="submit" size="sm" loading={link.isPending}>
              {ui.t('mfaVerify')}
            </Button>
            <button type="button" className="lk-link" disabled={busy} onClick={() => void send()}>
              {ui.t('mfaContactResend')}
            </button>
            <Button size="sm" variant="ghost" disabled={busy} onClick={onCancel}>
              {ui.t('cancel')}
            </Button>
          </div>
        </form>
      )}
      <ErrorRegion id={errorId} ui={ui} error={error} message={message} />
    </div>
  )
}
