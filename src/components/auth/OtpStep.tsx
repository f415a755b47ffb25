import {
  type ClipboardEvent,
  type KeyboardEvent,
  type MouseEvent,
  useEffect,
  useId,
  useRef,
  useState,
} from 'react'
import { Alert } from '../ui/Alert.tsx'
import { ErrorText } from '../ui/ErrorText.tsx'
import { errorCodeOf } from '../ui/errorMessage.ts'
import { MailIcon, PhoneIcon } from '../ui/icons.tsx'
import { Header, Spinner } from '../ui/parts.tsx'
import { useAuthFlowContext } from './AuthFlowContext.ts'
import { CaptchaField, focusCaptcha } from './CaptchaField.tsx'

/** Seconds before "Resend code" is offered again (the service allows 3 sends a minute). */
export const RESEND_COOLDOWN_SECONDS = 30

export interface OtpStepProps {
  /** Number of characters of the code. @default the service's (`wallet_kit_config`), else 6 */
  length?: number
}

/**
 * Code entry: one field per character, paste of the whole code, auto-submit when complete,
 * resend with a cooldown, and distinct messages for wrong, expired and locked codes.
 */
export function OtpStep(props: OtpStepProps) {
  const flow = useAuthFlowContext()
  const length = props.length ?? flow.otp?.length ?? 6
  // Alphanumeric codes are Crockford's base 32, typed in either case (the service reads O as 0, I/L as 1).
  const alphanumeric = flow.otp?.alphanumeric === true
  const { ui, step } = flow
  const titleId = flow.titleId
  const descriptionId = useId()
  const errorId = useId()
  const [digits, setDigits] = useState<string[]>(() => Array(length).fill(''))
  const inputs = useRef<(HTMLInputElement | null)[]>([])
  const [cooldown, setCooldown] = useState(RESEND_COOLDOWN_SECONDS)
  const [resent, setResent] = useState(false)
  const contact = step.name === 'otp' ? step.contact : ''
  const channel = step.name === 'otp' ? step.channel : 'email'
  const code = errorCodeOf(flow.error)
  // A locked or expired code cannot be retried: only a new code helps.
  const dead =
    code === 'OTP_ATTEMPTS_EXCEEDED' || code === 'OTP_EXPIRED' || code === 'VERIFICATION_TOKEN_INVALID'

  useEffect(() => {
    if (cooldown <= 0) return
    const timer = setTimeout(() => setCooldown((s) => s - 1), 1000)
    return () => clearTimeout(timer)
  }, [cooldown])

  // A wrong code clears the fields in the same render that shows why (never a moment with the
  // wrong code still in them, which an effect would leave), then puts the caret back at the start.
  const [shownError, setShownError] = useState(flow.error)
  if (flow.error !== shownError) {
    setShownError(flow.error)
    if (flow.error) setDigits(Array(length).fill(''))
  }
  useEffect(() => {
    if (flow.error && !dead) inputs.current[0]?.focus()
  }, [flow.error, dead])

  const submitIfComplete = (next: string[]) => {
    if (next.every((d) => d !== '')) void flow.verifyOtp(next.join(''))
  }

  const fill = (start: number, text: string) => {
    const chars = (alphanumeric ? text.toUpperCase().replace(/[^0-9A-Z]/g, '') : text.replace(/\D/g, ''))
      .slice(0, length - start)
      .split('')
    if (chars.length === 0) return
    if (flow.error) flow.clearError()
    const next = [...digits]
    chars.forEach((c, i) => {
      next[start + i] = c
    })
    setDigits(next)
    inputs.current[Math.min(start + chars.length, length - 1)]?.focus()
    submitIfComplete(next)
  }

  const onKeyDown = (index: number, event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'Backspace' && digits[index] === '' && index > 0) {
      event.preventDefault()
      const next = [...digits]
      next[index - 1] = ''
      setDigits(next)
      inputs.current[index - 1]?.focus()
    } else if (event.key === 'ArrowLeft' && index > 0) {
      event.preventDefault()
      inputs.current[index - 1]?.focus()
    } else if (event.key === 'ArrowRight' && index < length - 1) {
      event.preventDefault()
      inputs.current[index + 1]?.focus()
    }
  }

  const onPaste = (index: number, event: ClipboardEvent<HTMLInputElement>) => {
    event.preventDefault()
    fill(index, event.clipboardData.getData('text'))
  }

  const canResend = cooldown <= 0 || dead
  // A new code needs a new check (tokens are single-use): the widget shows once resending is possible.
  const waitingForCaptcha = Boolean(flow.captcha && !flow.captcha.token)

  const resend = async (event: MouseEvent<HTMLButtonElement>) => {
    if (waitingForCaptcha) return focusCaptcha(event.currentTarget)
    setDigits(Array(length).fill(''))
    setResent(false)
    const ok = await flow.resendOtp()
    if (ok) {
      setCooldown(RESEND_COOLDOWN_SECONDS)
      setResent(true)
      inputs.current[0]?.focus()
    }
  }

  return (
    <div className="lk-panel">
      <Header
        ui={ui}
        titleId={titleId}
        title={ui.t('otpTitle')}
        descriptionId={descriptionId}
        description={ui.t(alphanumeric ? 'otpDescriptionCharacters' : 'otpDescription', {
          length,
          contact: `\u2068${contact}\u2069`,
        })}
        onBack={flow.back}
        onClose={flow.cancel}
      />
      <div className="lk-hero" aria-hidden="true">
        {channel === 'sms' ? <PhoneIcon size={26} /> : <MailIcon size={26} />}
      </div>
      <fieldset
        className="lk-otp"
        aria-labelledby={titleId}
        aria-describedby={flow.error ? errorId : descriptionId}
        aria-invalid={flow.error ? true : undefined}
        disabled={flow.busy || dead}
        style={{ border: 0, margin: 0, padding: 0 }}
      >
        <legend className="lk-visually-hidden">{ui.t('otpGroupLabel')}</legend>
        {digits.map((digit, index) => (
          <input
            // biome-ignore lint/suspicious/noArrayIndexKey: the fields are positions of the code
            key={index}
            ref={(el) => {
              inputs.current[index] = el
            }}
            className="lk-otp-digit"
            type="text"
            inputMode={alphanumeric ? 'text' : 'numeric'}
            pattern={alphanumeric ? '[0-9A-Za-z]*' : '[0-9]*'}
            autoCapitalize={alphanumeric ? 'characters' : undefined}
            autoComplete={index === 0 ? 'one-time-code' : 'off'}
            // biome-ignore lint/a11y/noAutofocus: entering the code is the only task of this step
            autoFocus={index === 0}
            maxLength={index === 0 ? length : 1}
            aria-label={ui.t(alphanumeric ? 'otpCharacterLabel' : 'otpDigitLabel', {
              index: index + 1,
              length,
            })}
            value={digit}
            onChange={(event) => {
              const value = event.target.value
              if (value === '') {
                const next = [...digits]
                next[index] = ''
                setDigits(next)
              } else fill(index, value.slice(-(value.length > 1 && index === 0 ? length : 1)))
            }}
            onKeyDown={(event) => onKeyDown(index, event)}
            onPaste={(event) => onPaste(index, event)}
            onFocus={(event) => event.target.select()}
          />
        ))}
      </fieldset>
      <div aria-live="polite" className="lk-stack" data-gap="sm">
        {flow.busy ? (
          <p className="lk-row lk-muted" style={{ justifyContent: 'center', margin: 0 }}>
            <Spinner />
            {ui.t('otpVerifying')}
          </p>
        ) : null}
        {resent && !flow.error ? <Alert tone="success">{ui.t('otpResent')}</Alert> : null}
      </div>
      {flow.error ? (
        <div id={errorId}>
          <Alert tone="error">
            <ErrorText ui={ui} error={flow.error} />
          </Alert>
        </div>
      ) : null}
      {flow.devOutboxUrl ? (
        <p className="lk-muted" style={{ margin: 0, textAlign: 'center', fontSize: 13 }}>
          <a className="lk-link" href={flow.devOutboxUrl} target="_blank" rel="noreferrer">
            {ui.t('otpDevOutbox')}
          </a>
        </p>
      ) : null}
      {canResend ? <CaptchaField /> : null}
      <div className="lk-row" data-justify="between" data-wrap="">
        <button type="button" className="lk-link" onClick={flow.back}>
          {ui.t('otpChangeContact')}
        </button>
        <button
          type="button"
          className="lk-link"
          disabled={!canResend || flow.busy}
          aria-disabled={(canResend && waitingForCaptcha) || undefined}
          onClick={resend}
        >
          {!canResend
            ? ui.t('otpResendIn', { seconds: cooldown })
            : waitingForCaptcha
              ? ui.t('captchaWaiting')
              : ui.t('otpResend')}
        </button>
      </div>
    </div>
  )
}
