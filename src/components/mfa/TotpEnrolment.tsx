import { generate } from 'lean-qr'
import { type FormEvent, useId, useLayoutEffect, useMemo, useRef, useState } from 'react'
import type { CreateTotpFactorReturnType } from '../../core/actions/activities/createTotpFactor.ts'
import { useConfirmTotpFactor } from '../../react/index.ts'
import { CodeField } from '../ui/CodeField.tsx'
import { CopyButton } from '../ui/CopyButton.tsx'
import { errorCodeOf } from '../ui/errorMessage.ts'
import { ErrorRegion } from '../ui/feedback.tsx'
import { Button } from '../ui/parts.tsx'
import { useStrings } from '../ui/useStrings.ts'
import type { Ui } from '../ui/useUi.ts'
import { enrolmentUiStrings } from './mfaStrings.ts'

/**
 * The QR code of a text as an SVG path, one unit per module (lean-qr encodes; no canvas). Dark
 * modules are drawn in the text colour on the card's background, inside a quiet zone of 4.
 */
export function QrCode({ text, label }: { text: string; label: string }) {
  const { size, path } = useMemo(() => {
    const code = generate(text)
    let d = ''
    for (let y = 0; y < code.size; y++)
      for (let x = 0; x < code.size; x++) if (code.get(x, y)) d += `M${x} ${y}h1v1h-1z`
    return { size: code.size, path: d }
  }, [text])
  return (
    <svg
      role="img"
      aria-label={label}
      viewBox={`-4 -4 ${size + 8} ${size + 8}`}
      width="200"
      height="200"
      shapeRendering="crispEdges"
      data-lk-qr=""
      style={{ maxInlineSize: '100%', blockSize: 'auto', background: '#fff', borderRadius: 8 }}
    >
      <path d={path} fill="#000" />
    </svg>
  )
}

/**
 * Enrolling an authenticator app (its own chunk, with the QR encoder): the QR code and the
 * `otpauth://` link and key to copy, then a first code to confirm it. The secret is shown here only.
 */
export function TotpEnrolment({
  ui: screen,
  factor,
  onConfirmed,
  onCancel,
}: {
  ui: Ui
  factor: CreateTotpFactorReturnType
  onConfirmed: () => void
  onCancel: () => void
}) {
  // The enrolment's strings come with this chunk.
  const ui = useStrings(screen, enrolmentUiStrings)
  const confirm = useConfirmTotpFactor()
  const [code, setCode] = useState('')
  const [error, setError] = useState<unknown>(null)
  const headingRef = useRef<HTMLHeadingElement>(null)
  const field = useRef<HTMLInputElement>(null)
  const headingId = useId()
  const errorId = useId()
  // Focus follows the step: the heading when the code appears, the field after a wrong code.
  useLayoutEffect(() => headingRef.current?.focus(), [])
  useLayoutEffect(() => {
    if (error) field.current?.focus()
  }, [error])

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    setError(null)
    const text = code.trim()
    if (!/^[0-9]{6}$/.test(text)) return setError({ code: 'MFA_CODE_FORMAT' })
    try {
      await confirm.mutateAsync({ factorId: factor.factorId, code: text })
      onConfirmed()
    } catch (caught) {
      setError(caught)
    }
  }
  const errorCode = errorCodeOf(error)
  const message =
    errorCode === 'MFA_CODE_FORMAT'
      ? ui.t('mfaCodeFormat')
      : errorCode === 'OTP_INVALID'
        ? ui.t('mfaCodeWrong')
        : undefined

  return (
    <div className="lk-stack" data-lk-step="totp-enrol">
      <h3
        ref={headingRef}
        id={headingId}
        tabIndex={-1}
        className="lk-title"
        style={{ fontSize: 16, margin: 0 }}
      >
        {ui.t('secEnrolTitle')}
      </h3>
      <p className="lk-subtle" style={{ margin: 0 }}>
        {ui.t('secEnrolBody')}
      </p>
      <div style={{ display: 'flex', justifyContent: 'center' }}>
        <QrCode text={factor.otpauthUri} label={ui.t('secEnrolQr')} />
      </div>
      <dl className="lk-kv">
        <dt>{ui.t('secEnrolKey')}</dt>
        <dd className="lk-mono" dir="ltr" data-lk-totp-secret="">
          {factor.secret}
        </dd>
        <dt>{ui.t('secEnrolLink')}</dt>
        <dd className="lk-mono" dir="ltr" data-lk-otpauth="">
          {factor.otpauthUri}
        </dd>
      </dl>
      <div className="lk-row" data-wrap="">
        <CopyButton ui={ui} text={factor.secret} label={ui.t('secEnrolCopyKey')} />
        <CopyButton ui={ui} text={factor.otpauthUri} label={ui.t('secEnrolCopyLink')} />
      </div>
      <form className="lk-stack" data-gap="sm" onSubmit={(event) => void submit(event)} noValidate>
        <CodeField
          inputRef={field}
          label={ui.t('secEnrolConfirmTitle')}
          kind="digits"
          value={code}
          onChange={setCode}
          error={error}
          errorId={errorId}
          disabled={confirm.isPending}
          focusOnMount={false}
        />
        <ErrorRegion id={errorId} ui={ui} error={error} message={message} />
        <Button block type="submit" loading={confirm.isPending}>
          {ui.t('secEnrolConfirm')}
        </Button>
        <Button block variant="ghost" onClick={onCancel} disabled={confirm.isPending}>
          {ui.t('cancel')}
        </Button>
      </form>
    </div>
  )
}
