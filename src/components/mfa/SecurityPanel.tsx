import type { MfaFactor, MfaPolicy } from '@latchkey/protocol'
import { type FormEvent, lazy, Suspense, useEffect, useId, useLayoutEffect, useRef, useState } from 'react'
import type { CreateTotpFactorReturnType } from '../../core/actions/activities/createTotpFactor.ts'
import type { MfaRequiredError } from '../../core/errors.ts'
import {
  useCreateMfaPolicy,
  useCreateRecoveryCodes,
  useCreateTotpFactor,
  useDeleteMfaPolicy,
  useDeleteTotpFactor,
  useMfaFactors,
  useMfaPolicies,
  useUpdateMfaPolicy,
  useUser,
} from '../../react/index.ts'
import { joinStrings } from '../i18n/joinStrings.ts'
import { securityStrings } from '../i18n/sections/security.ts'
import { type AmountProblem, amountRefusal, readAmount, typedUnits } from '../limits/allowance.ts'
import { Alert } from '../ui/Alert.tsx'
import { CopyButton } from '../ui/CopyButton.tsx'
import { ErrorText, MessageText } from '../ui/ErrorText.tsx'
import { errorCodeOf } from '../ui/errorMessage.ts'
import { LoadFailed, Loading } from '../ui/feedback.tsx'
import { LockIcon, PasskeyIcon, PlusIcon } from '../ui/icons.tsx'
import { Button } from '../ui/parts.tsx'
import { uiStrings } from '../ui/uiStrings.ts'
import { type Ui, useUi } from '../ui/useUi.ts'
import { isMfaRequired, LazyStepUp } from './LazyStepUp.tsx'
import {
  EXPORTS_CONDITION,
  EXPORTS_METHODS,
  EXPORTS_POLICY,
  recoveryCodesFile,
  SENDS_METHODS,
  SENDS_POLICY,
  sendsCondition,
  sortPolicies,
  thresholdOf,
} from './rules.ts'
import type { SecuritySettingsProps } from './SecuritySettingsProps.ts'

const strings = /* @__PURE__ */ joinStrings(uiStrings, securityStrings)
type Keys = keyof typeof strings.en

/** What the sends rule's field says of an amount `readAmount` refused. */
const AMOUNT_REFUSALS: Record<AmountProblem, Keys> = {
  invalid: 'secRuleAmountInvalid',
  large: 'secRuleAmountTooLarge',
  ambiguous: 'secRuleAmountAmbiguous',
}

// The enrolment step (QR code, `otpauth://` link, first code) and its QR encoder load only when
// the user adds an authenticator app.
const loadEnrolment = () => import('./TotpEnrolment.tsx')
const TotpEnrolment = lazy(() => loadEnrolment().then((m) => ({ default: m.TotpEnrolment })))

type View =
  | { step: 'home' }
  | { step: 'enrol'; factor: CreateTotpFactorReturnType }
  | { step: 'codes'; codes: string[] }

/** An action an MFA policy holds: the challenge, and what to do with the action's result. */
interface Held {
  challenge: MfaRequiredError<unknown>
  next: (result: unknown) => void
}

/**
 * The service's refusal to remove an authenticator app that is the last way to prove one of the
 * user's MFA policies (a 400 naming `parameters.factorId`, answered before any code is asked).
 */
const isLastFactorRefusal = (error: unknown): boolean =>
  errorCodeOf(error) === 'FIELD_INVALID' &&
  (error as { details?: { field?: unknown } }).details?.field === 'parameters.factorId'

/** `<SecuritySettings/>`'s body (its own chunk). */
export function SecurityPanel({ onChange, className, ...look }: SecuritySettingsProps) {
  const ui = useUi(look, strings)
  const titleId = useId()
  const user = useUser()
  const factors = useMfaFactors()
  const policies = useMfaPolicies()
  const createTotp = useCreateTotpFactor()
  const deleteTotp = useDeleteTotpFactor()
  const createCodes = useCreateRecoveryCodes()
  const createPolicy = useCreateMfaPolicy()
  const updatePolicy = useUpdateMfaPolicy()
  const deletePolicy = useDeleteMfaPolicy()
  const [view, setView] = useState<View>({ step: 'home' })
  const [held, setHeld] = useState<Held | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const [busy, setBusy] = useState<string | null>(null)
  const noticeRef = useRef<HTMLParagraphElement>(null)
  const [focusTurn, setFocusTurn] = useState(0)
  // Back on the list, focus goes to the notice that says what happened (after that render).
  useEffect(() => {
    if (focusTurn > 0) noticeRef.current?.focus()
  }, [focusTurn])

  const refresh = () => {
    void factors.refetch()
    void policies.refetch()
    void user.refetch()
  }
  const done = (message: string | null) => {
    setView({ step: 'home' })
    setNotice(message)
    setFocusTurn((turn) => turn + 1)
    refresh()
    onChange?.()
  }

  /** Runs an action; one an MFA policy holds shows the challenge first, then goes on with its result. */
  const guard = async <T,>(name: string, run: () => Promise<T>, then: (result: T) => void) => {
    setError(null)
    setNotice(null)
    setBusy(name)
    try {
      then(await run())
    } catch (caught) {
      if (isMfaRequired(caught)) setHeld({ challenge: caught, next: then as (result: unknown) => void })
      else setError(caught)
    } finally {
      setBusy(null)
    }
  }

  const root = {
    ...ui.rootProps,
    className: `${ui.rootProps.className} lk-card${className ? ` ${className}` : ''}`,
    'aria-labelledby': titleId,
  }
  const header = (
    <div className="lk-stack" data-gap="sm">
      <h2 className="lk-card-title" id={titleId}>
        {ui.t('secTitle')}
      </h2>
      <p className="lk-subtle" style={{ margin: 0 }}>
        {ui.t('secDescription')}
      </p>
    </div>
  )

  if (held)
    return (
      <section {...root} data-lk-security="step-up">
        {header}
        <LazyStepUp
          ui={ui}
          challenge={held.challenge}
          onCancel={() => {
            setHeld(null)
            setFocusTurn((turn) => turn + 1)
          }}
          onDone={(result) => {
            setHeld(null)
            held.next(result)
            refresh()
          }}
        />
      </section>
    )

  if (view.step === 'enrol')
    return (
      <section {...root} data-lk-security="enrol">
        {header}
        <Suspense fallback={<Loading ui={ui} />}>
          <TotpEnrolment
            ui={ui}
            factor={view.factor}
            onCancel={() => done(null)}
            onConfirmed={() => done(ui.t('secEnrolDone'))}
          />
        </Suspense>
      </section>
    )

  if (view.step === 'codes')
    return (
      <section {...root} data-lk-security="codes">
        {header}
        <RecoveryCodes ui={ui} codes={view.codes} onDone={() => done(null)} />
      </section>
    )

  const passkeys = user.data?.user.authenticators ?? []
  const totp = factors.data?.factors ?? []
  const confirmedTotp = totp.filter((factor) => factor.confirmed)
  const codesLeft = factors.data?.recoveryCodesRemaining ?? 0
  const rules = sortPolicies(policies.data?.mfaPolicies ?? [])
  const loading = user.isPending || factors.isPending || policies.isPending
  const loadError = user.error ?? factors.error ?? policies.error

  return (
    <section {...root} data-lk-security="home">
      {header}
      {loading ? (
        <Loading ui={ui} />
      ) : loadError ? (
        <LoadFailed ui={ui} error={loadError} retry={refresh} />
      ) : (
        <>
          <h3 className="lk-title" style={{ fontSize: 15, margin: 0 }}>
            {ui.t('secFactors')}
          </h3>
          <ul className="lk-list" aria-label={ui.t('secFactors')}>
            <li data-lk-factor="passkeys">
              <PasskeyIcon size={18} />
              <span className="lk-grow lk-stack" data-gap="sm" data-basis="text">
                <span className="lk-strong">{ui.t('secPasskeys')}</span>
                <span className="lk-subtle">
                  {passkeys.length > 0
                    ? ui.t('secPasskeyCount', { count: String(passkeys.length) })
                    : ui.t('secPasskeyNone')}
                </span>
              </span>
            </li>
            {totp.map((factor) => (
              <TotpRow
                key={factor.factorId}
                ui={ui}
                factor={factor}
                removing={busy === `remove:${factor.factorId}`}
                disabled={busy !== null}
                onRemove={() =>
                  void guard(
                    `remove:${factor.factorId}`,
                    () => deleteTotp.mutateAsync({ factorId: factor.factorId }),
                    () => done(ui.t('secTotpRemoved', { name: factor.factorName })),
                  )
                }
              />
            ))}
            {/* E-mail and SMS one-time-code factors (issue 38, built with src/components/logins)
                show here, one row each, between the authenticator apps and the recovery codes. */}
            <li data-lk-factor="recovery">
              <LockIcon size={18} />
              <span className="lk-grow lk-stack" data-gap="sm" data-basis="text">
                <span className="lk-strong">{ui.t('secRecovery')}</span>
                <span className="lk-subtle">
                  {codesLeft > 0
                    ? ui.t('secRecoveryLeft', { count: String(codesLeft) })
                    : ui.t('secRecoveryNone')}
                </span>
              </span>
              <Button
                size="sm"
                variant="secondary"
                loading={busy === 'codes'}
                disabled={busy !== null}
                aria-label={codesLeft > 0 ? ui.t('secRecoveryRegenerateLabel') : undefined}
                onClick={() =>
                  void guard(
                    'codes',
                    () => createCodes.mutateAsync({}),
                    (result) => setView({ step: 'codes', codes: result.recoveryCodes }),
                  )
                }
              >
                {codesLeft > 0 ? ui.t('secRecoveryRegenerate') : ui.t('secRecoveryCreate')}
              </Button>
            </li>
          </ul>
          <div className="lk-row">
            <Button
              variant="secondary"
              loading={busy === 'enrol'}
              disabled={busy !== null}
              onMouseEnter={() => void loadEnrolment()}
              onFocus={() => void loadEnrolment()}
              onClick={() => {
                void loadEnrolment()
                void guard(
                  'enrol',
                  () => createTotp.mutateAsync({}),
                  (factor) => setView({ step: 'enrol', factor }),
                )
              }}
            >
              <PlusIcon />
              {ui.t('secTotpAdd')}
            </Button>
          </div>
          <Rules
            ui={ui}
            exports={rules.exports}
            sends={rules.sends}
            others={rules.others}
            canExports={confirmedTotp.length > 0 || passkeys.length > 0}
            canSends={passkeys.length > 0}
            busy={busy}
            onExports={(on) =>
              void guard(
                'exports',
                () =>
                  on
                    ? createPolicy.mutateAsync({
                        mfaPolicyName: EXPORTS_POLICY,
                        condition: EXPORTS_CONDITION,
                        requiredAuthenticationMethods: EXPORTS_METHODS,
                        order: 0,
                      })
                    : deletePolicy.mutateAsync({ mfaPolicyId: (rules.exports as MfaPolicy).mfaPolicyId }),
                () => done(ui.t('secRuleSaved')),
              )
            }
            onSends={(wei) =>
              void guard(
                'sends',
                () =>
                  wei === undefined
                    ? deletePolicy.mutateAsync({ mfaPolicyId: (rules.sends as MfaPolicy).mfaPolicyId })
                    : rules.sends
                      ? updatePolicy.mutateAsync({
                          mfaPolicyId: rules.sends.mfaPolicyId,
                          condition: sendsCondition(wei),
                          requiredAuthenticationMethods: SENDS_METHODS,
                        })
                      : createPolicy.mutateAsync({
                          mfaPolicyName: SENDS_POLICY,
                          condition: sendsCondition(wei),
                          requiredAuthenticationMethods: SENDS_METHODS,
                          order: 1,
                        }),
                () => done(ui.t('secRuleSaved')),
              )
            }
          />
        </>
      )}
      {error ? (
        <Alert tone="error">
          {isLastFactorRefusal(error) ? ui.t('secTotpLast') : <ErrorText ui={ui} error={error} />}
        </Alert>
      ) : null}
      <p className="lk-subtle" role="status" ref={noticeRef} tabIndex={-1} style={{ margin: 0 }}>
        {notice}
      </p>
    </section>
  )
}

function TotpRow({
  ui,
  factor,
  removing,
  disabled,
  onRemove,
}: {
  ui: Ui<Keys>
  factor: MfaFactor
  removing: boolean
  disabled: boolean
  onRemove: () => void
}) {
  return (
    <li data-lk-factor={factor.factorId}>
      <LockIcon size={18} />
      <span className="lk-grow lk-stack" data-gap="sm" data-basis="text">
        <span className="lk-row" data-wrap="">
          <span className="lk-strong">{ui.t('secTotp')}</span>
          {factor.confirmed ? null : (
            <span className="lk-badge" data-tone="warning">
              {ui.t('secTotpUnconfirmed')}
            </span>
          )}
        </span>
        <span className="lk-subtle" style={{ overflowWrap: 'anywhere' }}>
          {factor.factorName}
        </span>
      </span>
      <Button
        size="sm"
        variant="danger"
        loading={removing}
        disabled={disabled}
        aria-label={ui.t('secTotpRemoveLabel', { name: factor.factorName })}
        onClick={onRemove}
      >
        {ui.t('secTotpRemove')}
      </Button>
    </li>
  )
}

/** Recovery codes, shown once: copy them all, download them as a .txt file. */
function RecoveryCodes({ ui, codes, onDone }: { ui: Ui<Keys>; codes: string[]; onDone: () => void }) {
  const headingRef = useRef<HTMLHeadingElement>(null)
  const headingId = useId()
  useLayoutEffect(() => headingRef.current?.focus(), [])
  const text = recoveryCodesFile(ui.t('secCodesFileHeader'), codes)
  const download = () => {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }))
    const link = document.createElement('a')
    link.href = url
    link.download = 'recovery-codes.txt'
    document.body.append(link)
    link.click()
    link.remove()
    setTimeout(() => URL.revokeObjectURL(url), 1000)
  }
  return (
    <div className="lk-stack" data-lk-step="recovery-codes">
      <h3
        ref={headingRef}
        id={headingId}
        tabIndex={-1}
        className="lk-title"
        style={{ fontSize: 16, margin: 0 }}
      >
        {ui.t('secCodesTitle')}
      </h3>
      <Alert tone="warning">
        <MessageText text={ui.t('secCodesBody')} />
      </Alert>
      <ol
        className="lk-code"
        aria-labelledby={headingId}
        data-lk-recovery-codes=""
        style={{ paddingInlineStart: 36, maxBlockSize: 'none' }}
      >
        {codes.map((code) => (
          <li key={code}>{code}</li>
        ))}
      </ol>
      <div className="lk-row" data-wrap="">
        <CopyButton ui={ui} text={codes.join('\n')} label={ui.t('secCodesCopy')} />
        <Button size="sm" variant="secondary" onClick={download}>
          {ui.t('secCodesDownload')}
        </Button>
      </div>
      <Button block onClick={onDone}>
        {ui.t('secCodesDone')}
      </Button>
    </div>
  )
}

/** When to ask for a second factor, in words: the two common rules, and any other by name. */
function Rules({
  ui,
  exports,
  sends,
  others,
  canExports,
  canSends,
  busy,
  onExports,
  onSends,
}: {
  ui: Ui<Keys>
  exports: MfaPolicy | undefined
  sends: MfaPolicy | undefined
  others: MfaPolicy[]
  canExports: boolean
  canSends: boolean
  busy: string | null
  onExports: (on: boolean) => void
  /** A threshold in wei, or undefined to remove the rule. */
  onSends: (wei: bigint | undefined) => void
}) {
  const threshold = sends ? thresholdOf(sends.condition) : undefined
  const [sendsOn, setSendsOn] = useState(Boolean(sends))
  // In the user's decimal mark (`0,1` in Spanish), read back the same way (`readAmount`).
  const [amount, setAmount] = useState(() => typedUnits(threshold ?? 10n ** 17n, 18, ui.locale))
  /** Why the amount was refused: not an amount, or one that could be read two ways or is too large. */
  const [refused, setRefused] = useState<{ key: Keys; values?: Record<string, string> }>()
  const amountRef = useRef<HTMLInputElement>(null)
  const amountId = useId()
  const amountError = useId()
  const amountHint = useId()
  const hintId = useId()
  const exportsHintId = useId()
  useEffect(() => {
    setSendsOn(Boolean(sends))
    if (threshold !== undefined) setAmount(typedUnits(threshold, 18, ui.locale))
  }, [sends, threshold, ui.locale])
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (!sendsOn) {
      if (sends) onSends(undefined)
      return
    }
    const read = readAmount(amount, 18, ui.locale)
    if ('problem' in read) {
      const { problem } = read
      const values = problem === 'ambiguous' ? amountRefusal(amount, problem, ui.locale).values : undefined
      setRefused({ key: AMOUNT_REFUSALS[problem], ...(values ? { values } : {}) })
      amountRef.current?.focus()
      return
    }
    setRefused(undefined)
    onSends(read.units)
  }
  return (
    <div className="lk-stack" data-gap="sm" data-lk-rules="">
      <h3 className="lk-title" style={{ fontSize: 15, margin: 0 }}>
        {ui.t('secRules')}
      </h3>
      <label className="lk-checkbox">
        <input
          type="checkbox"
          checked={Boolean(exports)}
          disabled={busy !== null || (!exports && !canExports)}
          aria-busy={busy === 'exports' || undefined}
          aria-describedby={!canExports && !exports ? exportsHintId : undefined}
          onChange={(event) => onExports(event.target.checked)}
        />
        <span>{ui.t('secRuleExports')}</span>
      </label>
      {!canExports && !exports ? (
        <p className="lk-hint" id={exportsHintId} style={{ margin: 0 }}>
          {ui.t('secRuleNeedsFactor')}
        </p>
      ) : null}
      <form className="lk-stack" data-gap="sm" onSubmit={submit} noValidate>
        <label className="lk-checkbox">
          <input
            type="checkbox"
            checked={sendsOn}
            disabled={busy !== null || (!sends && !canSends)}
            aria-describedby={!canSends && !sends ? hintId : undefined}
            onChange={(event) => setSendsOn(event.target.checked)}
          />
          <span>{ui.t('secRuleSends')}</span>
        </label>
        {!canSends && !sends ? (
          <p className="lk-hint" id={hintId} style={{ margin: 0 }}>
            {ui.t('secRuleNeedsPasskey')}
          </p>
        ) : null}
        {sendsOn ? (
          <div className="lk-field">
            <label className="lk-label" htmlFor={amountId}>
              {ui.t('secRuleAmount')}
            </label>
            <input
              ref={amountRef}
              id={amountId}
              className="lk-input"
              dir="ltr"
              inputMode="decimal"
              autoComplete="off"
              value={amount}
              onChange={(event) => setAmount(event.target.value)}
              aria-invalid={refused ? true : undefined}
              aria-describedby={refused ? `${amountHint} ${amountError}` : amountHint}
            />
            <p className="lk-hint" id={amountHint} style={{ margin: 0 }}>
              {ui.t('secRuleAmountHint')}
            </p>
            {refused ? (
              <p className="lk-field-error" id={amountError} role="alert">
                {ui.t(refused.key, refused.values)}
              </p>
            ) : null}
          </div>
        ) : null}
        {sendsOn || sends ? (
          <div className="lk-row">
            <Button size="sm" type="submit" loading={busy === 'sends'} disabled={busy !== null}>
              {ui.t('secRuleSave')}
            </Button>
          </div>
        ) : null}
      </form>
      {others.length > 0 ? (
        <ul className="lk-list">
          {others.map((policy) => (
            <li key={policy.mfaPolicyId}>
              <span className="lk-grow" style={{ overflowWrap: 'anywhere' }}>
                {policy.mfaPolicyName}
              </span>
              <span className="lk-badge">{ui.t('secRuleOther')}</span>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  )
}
