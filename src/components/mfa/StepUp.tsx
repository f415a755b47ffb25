import { type FormEvent, useId, useLayoutEffect, useRef, useState } from 'react'
import type { MfaRequiredError } from '../../core/errors.ts'
import { useCompleteMfa } from '../../react/index.ts'
import { CodeField } from '../ui/CodeField.tsx'
import { errorCodeOf } from '../ui/errorMessage.ts'
import { ErrorRegion } from '../ui/feedback.tsx'
import { Button } from '../ui/parts.tsx'
import { useStrings } from '../ui/useStrings.ts'
import type { Ui } from '../ui/useUi.ts'
import { ContactFactorStep, EMAIL_OTP, SMS_OTP } from './ContactFactorStep.tsx'
import { stepUpUiStrings } from './mfaStrings.ts'

export interface StepUpProps<T> {
  ui: Ui
  /** The action's `MfaRequiredError`: what it waits for. */
  challenge: MfaRequiredError<T>
  /** The original action's result, once the activity ran (once). */
  onDone: (result: T) => void
  onCancel: () => void
  /** Id for the title, when it names the dialog it is in. */
  titleId?: string | undefined
}

const TOTP = 'AUTHENTICATION_TYPE_LATCHKEY_TOTP'
const PASSKEY = 'AUTHENTICATION_TYPE_PASSKEY'

/** Seconds to wait, when the service said (`details.retryAfterSeconds`). */
const retryAfterOf = (error: unknown): number | undefined => {
  const seconds = (error as { details?: { retryAfterSeconds?: unknown } })?.details?.retryAfterSeconds
  return typeof seconds === 'number' && seconds > 0 ? seconds : undefined
}

/**
 * The step-up challenge (lazy chunk): an action came back waiting for the user's second factor.
 * Offers what the policy allows (a 6-digit authenticator code, a recovery code, a code e-mailed or
 * texted to the user: `ContactFactorStep`, a passkey), then hands the action's result to `onDone`. A wrong code says so and puts focus back in the field.
 */
export function StepUp<T>({
  ui: screen,
  challenge: first,
  onDone,
  onCancel,
  titleId: givenTitleId,
}: StepUpProps<T>) {
  // The challenge's strings come with this chunk, whichever screen shows it.
  const ui = useStrings(screen, stepUpUiStrings)
  const [challenge, setChallenge] = useState(first)
  const [mode, setMode] = useState<'code' | 'recovery'>('code')
  const [value, setValue] = useState('')
  const [error, setError] = useState<unknown>(null)
  const complete = useCompleteMfa()
  const field = useRef<HTMLInputElement>(null)
  const passkeyButton = useRef<HTMLButtonElement>(null)
  const ownTitleId = useId()
  const titleId = givenTitleId ?? ownTitleId
  const errorId = useId()
  const canCode = challenge.methods.includes(TOTP)
  const canPasskey = challenge.methods.includes(PASSKEY)
  const contactTypes = [EMAIL_OTP, SMS_OTP].filter((type) => challenge.methods.includes(type))

  // Focus follows the step: the field, else the passkey button (and back there after an error).
  // biome-ignore lint/correctness/useExhaustiveDependencies: refocus on each new step, mode and error
  useLayoutEffect(() => {
    ;(canCode ? field.current : passkeyButton.current)?.focus()
  }, [challenge, mode, error, canCode])

  type Proof = { totpCode: string } | { recoveryCode: string } | { passkey: true } | { contactCode: string }
  /** Proves the step; a refusal rejects (the e-mail/SMS step shows its own). */
  const prove = async (proof: Proof) => {
    try {
      const result = (await complete.mutateAsync({ challenge, ...proof } as never)) as T
      onDone(result)
    } catch (caught) {
      if (errorCodeOf(caught) !== 'MFA_REQUIRED') throw caught
      // One step proven, another remains.
      setChallenge(caught as MfaRequiredError<T>)
      setValue('')
    }
  }
  const finish = async (proof: Proof) => {
    setError(null)
    await prove(proof).catch(setError)
  }

  const submit = (event: FormEvent) => {
    event.preventDefault()
    const text = value.trim()
    if (mode === 'code') {
      if (!/^[0-9]{6}$/.test(text)) return setError({ code: 'MFA_CODE_FORMAT' })
      void finish({ totpCode: text })
    } else {
      if (text.replace(/[\s-]/g, '').length !== 10) return setError({ code: 'MFA_RECOVERY_FORMAT' })
      void finish({ recoveryCode: text })
    }
  }

  const code = errorCodeOf(error)
  const wait = retryAfterOf(error)
  const message =
    code === 'MFA_CODE_FORMAT'
      ? ui.t('mfaCodeFormat')
      : code === 'MFA_RECOVERY_FORMAT'
        ? ui.t('mfaRecoveryFormat')
        : code === 'OTP_INVALID'
          ? ui.t(mode === 'code' ? 'mfaCodeWrong' : 'mfaRecoveryWrong')
          : code === 'OTP_ATTEMPTS_EXCEEDED' || code === 'RATE_LIMITED'
            ? ui.t('mfaTooManyTries', { minutes: String(Math.max(1, Math.ceil((wait ?? 300) / 60))) })
            : undefined

  return (
    <section className="lk-stack" aria-labelledby={titleId} data-lk-step="mfa">
      <h3 id={titleId} className="lk-title" style={{ fontSize: 16, margin: 0 }}>
        {ui.t('mfaTitle')}
      </h3>
      {canCode || canPasskey ? (
        // Polite: a second step's "the next code" is announced as it replaces the first's text.
        <p className="lk-subtle" aria-live="polite" style={{ margin: 0 }}>
          {/* A second step the same authenticator proves needs its next code (each proves one step, once). */}
          {canCode ? ui.t(challenge !== first ? 'mfaNextCode' : 'mfaBodyCode') : ui.t('mfaBodyPasskey')}
        </p>
      ) : null}
      {canCode ? (
        <form className="lk-stack" data-gap="sm" onSubmit={submit} noValidate>
          <CodeField
            inputRef={field}
            label={mode === 'code' ? ui.t('mfaCodeLabel') : ui.t('mfaRecoveryLabel')}
            kind={mode === 'code' ? 'digits' : 'recovery'}
            value={value}
            onChange={setValue}
            error={error}
            errorId={errorId}
            disabled={complete.isPending}
          />
          <Button block type="submit" loading={complete.isPending}>
            {ui.t('mfaVerify')}
          </Button>
          <button
            type="button"
            className="lk-link"
            onClick={() => {
              setMode(mode === 'code' ? 'recovery' : 'code')
              setValue('')
              setError(null)
            }}
          >
            {mode === 'code' ? ui.t('mfaUseRecovery') : ui.t('mfaUseCode')}
          </button>
        </form>
      ) : null}
      {contactTypes.map((type, index) => (
        <ContactFactorStep
          key={`${challenge.fingerprint}:${type}`}
          ui={ui}
          challenge={challenge as MfaRequiredError<unknown>}
          type={type}
          prove={prove}
          autoFocus={!canCode && !canPasskey && index === 0}
          disabled={complete.isPending}
        />
      ))}
      {canPasskey ? (
        <button
          ref={passkeyButton}
          type="button"
          className="lk-button"
          data-variant={canCode ? 'secondary' : 'primary'}
          data-size="md"
          data-block=""
          disabled={complete.isPending}
          onClick={() => void finish({ passkey: true })}
        >
          {ui.t('mfaUsePasskey')}
        </button>
      ) : null}
      <ErrorRegion id={errorId} ui={ui} error={error} message={message} />
      <Button block variant="ghost" onClick={onCancel} disabled={complete.isPending}>
        {ui.t('cancel')}
      </Button>
    </section>
  )
}
