import { type FormEvent, useId, useLayoutEffect, useRef, useState } from 'react'
import type { SendMfaCodeParameters } from '../../core/actions/activities/sendMfaCode.ts'
import type { MfaRequiredError } from '../../core/errors.ts'
import { useSendMfaCode } from '../../react/hooks/useSendMfaCode.ts'
import { CodeField } from '../ui/CodeField.tsx'
import { errorCodeOf } from '../ui/errorMessage.ts'
import { ErrorRegion } from '../ui/feedback.tsx'
import { Button } from '../ui/parts.tsx'
import type { Ui, UiKey } from '../ui/useUi.ts'
import type { StepUpKey } from './mfaStrings.ts'

export type ContactFactorType = SendMfaCodeParameters['type']
export const EMAIL_OTP: ContactFactorType = 'AUTHENTICATION_TYPE_EMAIL_OTP'
export const SMS_OTP: ContactFactorType = 'AUTHENTICATION_TYPE_SMS_OTP'

export interface ContactFactorStepProps {
  ui: Ui<UiKey | StepUpKey>
  /** What the action waits for: the code is sent for (and bound to) its activity. */
  challenge: MfaRequiredError<unknown>
  /** E-mail or SMS. */
  type: ContactFactorType
  /** Proves the step with the code; rejects with the service's refusal. */
  prove: (proof: { contactCode: string }) => Promise<void>
  /** Focus the send button on mount (when it is the first thing the step offers). */
  autoFocus?: boolean | undefined
  disabled?: boolean | undefined
}

/** Seconds to wait, when the service said (`details.retryAfterSeconds`). */
const retryAfterOf = (error: unknown): number | undefined => {
  const seconds = (error as { details?: { retryAfterSeconds?: unknown } })?.details?.retryAfterSeconds
  return typeof seconds === 'number' && seconds > 0 ? seconds : undefined
}

/**
 * One e-mail or SMS factor of the step-up: "Email me a code" / "Text me a code" sends a code to
 * the user's verified contact (masked in the answer), then a field takes it. A wrong or expired
 * code is explained in words and focus goes back to the field; "Send a new code" replaces it.
 */
export function ContactFactorStep({
  ui,
  challenge,
  type,
  prove,
  autoFocus,
  disabled,
}: ContactFactorStepProps) {
  const send = useSendMfaCode()
  const [sentTo, setSentTo] = useState<string | undefined>()
  const [value, setValue] = useState('')
  const [error, setError] = useState<unknown>(null)
  const [proving, setProving] = useState(false)
  const sendButton = useRef<HTMLButtonElement>(null)
  const field = useRef<HTMLInputElement>(null)
  const errorId = useId()
  const email = type === EMAIL_OTP

  useLayoutEffect(() => {
    if (autoFocus) sendButton.current?.focus()
  }, [autoFocus])
  // Focus follows the step: into the field once a code is sent, and back there after an error.
  // biome-ignore lint/correctness/useExhaustiveDependencies: refocus on each send and each error
  useLayoutEffect(() => {
    if (sentTo !== undefined) field.current?.focus()
  }, [sentTo, error])

  const sendCode = async () => {
    setError(null)
    try {
      const sent = await send.mutateAsync({ challenge, type })
      setValue('')
      setSentTo(sent.sentTo)
    } catch (caught) {
      setError(caught)
    }
  }

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    const text = value.trim()
    if (!/^[0-9A-Za-z]{6,9}$/.test(text)) return setError({ code: 'MFA_CONTACT_FORMAT' })
    setError(null)
    setProving(true)
    try {
      await prove({ contactCode: text })
    } catch (caught) {
      setError(caught)
    } finally {
      setProving(false)
    }
  }

  const code = errorCodeOf(error)
  const message =
    code === 'MFA_CONTACT_FORMAT'
      ? ui.t('mfaContactFormat')
      : code === 'OTP_INVALID'
        ? ui.t('mfaContactWrong')
        : code === 'OTP_ATTEMPTS_EXCEEDED' || code === 'RATE_LIMITED'
          ? ui.t('mfaTooManyTries', {
              minutes: String(Math.max(1, Math.ceil((retryAfterOf(error) ?? 300) / 60))),
            })
          : code === 'FIELD_INVALID' && sentTo === undefined
            ? ui.t('mfaContactNoContact')
            : undefined
  const busy = Boolean(disabled) || send.isPending || proving

  return (
    <div className="lk-stack" data-gap="sm" data-lk-factor={email ? 'email' : 'sms'}>
      {sentTo === undefined ? (
        <button
          ref={sendButton}
          type="button"
          className="lk-button"
          data-variant="secondary"
          data-size="md"
          data-block=""
          disabled={busy}
          aria-describedby={error ? errorId : undefined}
          onClick={() => void sendCode()}
        >
          {ui.t(email ? 'mfaEmailMe' : 'mfaTextMe')}
        </button>
      ) : (
        <form className="lk-stack" data-gap="sm" onSubmit={(event) => void submit(event)} noValidate>
          <p className="lk-subtle" role="status" style={{ margin: 0, overflowWrap: 'anywhere' }}>
            {ui.t('mfaContactSent', { to: sentTo })}
          </p>
          <CodeField
            inputRef={field}
            label={ui.t('mfaContactCodeLabel')}
            kind="contact"
            value={value}
            onChange={setValue}
            error={error}
            errorId={errorId}
            disabled={busy}
          />
          <Button block type="submit" loading={proving}>
            {ui.t('mfaVerify')}
          </Button>
          <button type="button" className="lk-link" disabled={busy} onClick={() => void sendCode()}>
            {ui.t('mfaContactResend')}
          </button>
        </form>
      )}
      <ErrorRegion id={errorId} ui={ui} error={error} message={message} />
    </div>
  )
}
