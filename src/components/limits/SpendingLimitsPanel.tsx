import type { SpendingLimit, SpendingLimitPeriod } from '@latchkey/protocol'
import { type FormEvent, useEffect, useId, useRef, useState } from 'react'
import type { MfaRequiredError } from '../../core/errors.ts'
import {
  useCreateSpendingLimit,
  useDeleteSpendingLimit,
  useSession,
  useSpendingLimits,
  useUpdateSpendingLimit,
  useWalletAccounts,
} from '../../react/index.ts'
import { isMfaRequired, LazyStepUp } from '../mfa/LazyStepUp.tsx'
import { Alert } from '../ui/Alert.tsx'
import { ConfirmStep } from '../ui/ConfirmStep.tsx'
import { ErrorText } from '../ui/ErrorText.tsx'
import { LoadFailed, Loading } from '../ui/feedback.tsx'
import { PlusIcon } from '../ui/icons.tsx'
import { Button } from '../ui/parts.tsx'
import { type Ui, useUi } from '../ui/useUi.ts'
import {
  checkAmount,
  type FieldError,
  formatAmount,
  freesText,
  leftText,
  nameOnScreen,
  nativeOf,
  periodAdjective,
  typedUnits,
} from './allowance.ts'
import { LimitFields } from './LimitFields.tsx'
import { type LimitsKey, limitsUiStrings } from './limitsStrings.ts'
import type { SpendingLimitsProps } from './SpendingLimitsProps.ts'

/**
 * The limits on the user's whole account: on the user, or on one of the organization's wallet
 * accounts (the user's own, in their sub-organization). Limits on an API key (agents'), or on
 * another user (an agent's user), are not.
 */
export function accountLimits(
  limits: readonly SpendingLimit[] | undefined,
  userId: string | undefined,
): SpendingLimit[] {
  return (limits ?? []).filter(
    ({ scope }) =>
      scope.type === 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT' ||
      (scope.type === 'SPENDING_LIMIT_SCOPE_USER' && userId !== undefined && scope.userId === userId),
  )
}

/**
 * "Daily limit of 1 ETH": the name a limit set here gets (the service keeps it). A limit whose name
 * is still the one its amount gave it is renamed when its amount changes.
 */
function limitName(ui: Ui<LimitsKey>, caip2: string, units: bigint, period: SpendingLimitPeriod): string {
  const named = ui.t('limitsNameOf', {
    amount: formatAmount(ui.t, ui.locale, { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2 }, units.toString()),
    period: periodAdjective(ui.t, period),
  })
  // The amount's no-break spaces (`formatAmount`) are for the screen, not for the name kept.
  return (named.charAt(0).toLocaleUpperCase(ui.locale) + named.slice(1)).replace(/\u00a0/g, ' ')
}

type Step =
  | { kind: 'idle' }
  | { kind: 'adding' }
  | { kind: 'changing'; limit: SpendingLimit }
  | { kind: 'removing'; limit: SpendingLimit }
/** A change held for a second factor; `from` names the button it began at (focus returns there on cancel). */
type Waiting = { challenge: MfaRequiredError<unknown>; done: string; from: string }
/** Where focus goes once a step ends: the notice, the error, or back to a button. */
type FocusTarget = 'notice' | 'error' | { button: string }

export function SpendingLimitsPanel({ caip2, onChanged, className, ...look }: SpendingLimitsProps) {
  const ui = useUi(look, limitsUiStrings)
  const titleId = useId()
  const session = useSession()
  const limits = useSpendingLimits()
  const accounts = useWalletAccounts()
  const remove = useDeleteSpendingLimit()
  const [step, setStep] = useState<Step>({ kind: 'idle' })
  const [waiting, setWaiting] = useState<Waiting | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [focus, setFocus] = useState<{ target: FocusTarget; turn: number } | null>(null)
  const sectionRef = useRef<HTMLElement>(null)
  const noticeRef = useRef<HTMLParagraphElement>(null)
  const errorRef = useRef<HTMLDivElement>(null)
  const focusOn = (target: FocusTarget) => setFocus((last) => ({ target, turn: (last?.turn ?? 0) + 1 }))

  // Focus follows each step: the form's first field (autoFocus), the confirmation's "Yes", the
  // step-up's own field, then the outcome (or the refusal), or back where the step began.
  useEffect(() => {
    if (!focus) return
    const { target } = focus
    if (target === 'notice') noticeRef.current?.focus()
    else if (target === 'error') errorRef.current?.focus()
    else {
      const button = (name: string) =>
        sectionRef.current?.querySelector<HTMLButtonElement>(`[data-lk-focus="${name}"]:not(:disabled)`)
      ;(button(target.button) ?? button('add'))?.focus()
    }
  }, [focus])

  const mine = accountLimits(limits.data?.spendingLimits, session?.userId)
  const native = nativeOf(caip2)
  const eligible = (accounts.data?.accounts ?? []).filter((a) => a.addressFormat === native.addressFormat)

  const finished = (text: string) => {
    setStep({ kind: 'idle' })
    setWaiting(null)
    setError(null)
    setNotice(text)
    focusOn('notice')
    void limits.refetch()
    onChanged?.()
  }
  /** A change came back: done, held for a second factor, or refused. */
  const settle = async (action: () => Promise<unknown>, done: string, from: string) => {
    setNotice(null)
    setError(null)
    try {
      await action()
      finished(done)
    } catch (caught) {
      if (isMfaRequired(caught)) {
        // The step-up takes over (and the focus); the form it came from is done.
        setStep({ kind: 'idle' })
        setWaiting({ challenge: caught, done, from })
      } else {
        setError(caught)
        focusOn('error')
      }
    }
  }
  const cancel = (button: string) => {
    setStep({ kind: 'idle' })
    focusOn({ button })
  }
  /** The step-up is cancelled: the change is not made, focus goes back where it began. */
  const cancelWaiting = (held: Waiting) => {
    setWaiting(null)
    focusOn({ button: held.from })
  }
  const doRemove = (limit: SpendingLimit) => {
    setStep({ kind: 'idle' })
    void settle(
      () => remove.mutateAsync({ spendingLimitId: limit.spendingLimitId }),
      ui.t('limitsRemoved', { name: limit.spendingLimitName }),
      `remove:${limit.spendingLimitId}`,
    )
  }

  const root = {
    ...ui.rootProps,
    className: `${ui.rootProps.className} lk-card${className ? ` ${className}` : ''}`,
    'aria-labelledby': titleId,
  }
  const busy = remove.isPending || waiting !== null
  return (
    <section {...root} ref={sectionRef}>
      <div className="lk-stack" data-gap="sm">
        <h2 className="lk-card-title" id={titleId}>
          {ui.t('limitsTitle')}
        </h2>
        <p className="lk-subtle" style={{ margin: 0 }}>
          {ui.t('limitsDescription')}
        </p>
      </div>
      {limits.isPending ? (
        <Loading ui={ui} />
      ) : limits.isError ? (
        <LoadFailed ui={ui} error={limits.error} retry={() => void limits.refetch()} />
      ) : mine.length === 0 ? (
        <p className="lk-subtle" style={{ margin: 0 }}>
          {ui.t('limitsEmpty')}
        </p>
      ) : (
        <ul className="lk-list" aria-labelledby={titleId}>
          {mine.map((limit) => (
            <li key={limit.spendingLimitId} data-lk-limit={limit.spendingLimitId}>
              {step.kind === 'changing' && step.limit.spendingLimitId === limit.spendingLimitId ? (
                <LimitForm
                  ui={ui}
                  caip2={caip2}
                  limit={limit}
                  onCancel={() => cancel(`change:${limit.spendingLimitId}`)}
                  onSubmit={(change, name) =>
                    settle(
                      change,
                      ui.t('limitsSaved', { name: name ?? limit.spendingLimitName }),
                      `change:${limit.spendingLimitId}`,
                    )
                  }
                />
              ) : (
                <LimitRow
                  ui={ui}
                  limit={limit}
                  named={namedApart(ui, limit, mine)}
                  disabled={busy || step.kind !== 'idle'}
                  onChange={() => {
                    setNotice(null)
                    setError(null)
                    setStep({ kind: 'changing', limit })
                  }}
                  onRemove={() => {
                    setNotice(null)
                    setError(null)
                    setStep({ kind: 'removing', limit })
                  }}
                />
              )}
              {step.kind === 'removing' && step.limit.spendingLimitId === limit.spendingLimitId ? (
                <ConfirmStep
                  ui={ui}
                  question={ui.t('limitsRemoveConfirm', { name: limit.spendingLimitName })}
                  confirm={ui.t('limitsRemoveYes')}
                  onConfirm={() => doRemove(limit)}
                  onCancel={() => cancel(`remove:${limit.spendingLimitId}`)}
                />
              ) : null}
            </li>
          ))}
        </ul>
      )}
      {waiting ? (
        // Escape cancels the step-up as it does the form and the confirmation it follows; not while
        // a factor is being proven (its Cancel is disabled then too, aria-busy on its submit).
        <fieldset
          style={{ border: 0, padding: 0, margin: 0, minWidth: 0 }}
          onKeyDown={(event) => {
            if (event.key === 'Escape' && !event.currentTarget.querySelector('[aria-busy="true"]'))
              cancelWaiting(waiting)
          }}
        >
          <LazyStepUp
            ui={ui}
            challenge={waiting.challenge}
            onDone={() => finished(waiting.done)}
            onCancel={() => cancelWaiting(waiting)}
          />
        </fieldset>
      ) : null}
      <div aria-live="polite">
        {notice ? (
          <p ref={noticeRef} tabIndex={-1} className="lk-subtle" style={{ margin: 0 }}>
            {notice}
          </p>
        ) : null}
      </div>
      <div aria-live="assertive" ref={errorRef} tabIndex={-1}>
        {error ? (
          <Alert tone="error">
            <ErrorText ui={ui} error={error} />
          </Alert>
        ) : null}
      </div>
      {step.kind === 'adding' ? (
        <LimitForm
          ui={ui}
          caip2={caip2}
          accounts={eligible.map((account) => account.address)}
          userId={session?.userId}
          onCancel={() => cancel('add')}
          onSubmit={(create) => settle(create, ui.t('limitsCreated'), 'add')}
        />
      ) : limits.isSuccess ? (
        <div className="lk-row">
          <Button
            data-lk-focus="add"
            variant="secondary"
            disabled={busy || step.kind !== 'idle' || !session}
            onClick={() => {
              setNotice(null)
              setError(null)
              setStep({ kind: 'adding' })
            }}
          >
            <PlusIcon />
            {ui.t('limitsAdd')}
          </Button>
        </div>
      ) : null}
    </section>
  )
}

function LimitRow({
  ui,
  limit,
  named,
  disabled,
  onChange,
  onRemove,
}: {
  ui: Ui<LimitsKey>
  limit: SpendingLimit
  /** Its name in its buttons' labels (`namedApart`). */
  named: string
  disabled: boolean
  onChange: () => void
  onRemove: () => void
}) {
  const frees = freesText(ui.t, limit, Date.now(), ui.locale)
  const amount = (value: string) => formatAmount(ui.t, ui.locale, limit.asset, value)
  const { scope } = limit
  return (
    <>
      <span className="lk-grow lk-stack" data-gap="sm" data-basis="text">
        <span className="lk-row" data-wrap="">
          <span className="lk-strong">{nameOnScreen(limit.spendingLimitName)}</span>
          {limit.remaining === '0' ? (
            <span className="lk-badge" data-tone="warning">
              {ui.t('agentLimitReached')}
            </span>
          ) : null}
        </span>
        <span>
          {leftText(ui.t, ui.locale, limit)}
          {frees ? <span className="lk-subtle">{` · ${frees}`}</span> : null}
        </span>
        <dl className="lk-kv">
          <dt>{ui.t('agentUsed')}</dt>
          <dd>{ui.t('agentUsedOf', { used: amount(limit.used), limit: amount(limit.amount) })}</dd>
          <dt>{ui.t('limitsScope')}</dt>
          <dd>
            {scope.type === 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT' ? (
              <span className="lk-mono">{scope.address}</span>
            ) : (
              ui.t('limitsScopeUser')
            )}
          </dd>
        </dl>
      </span>
      <span className="lk-row" data-wrap="">
        <Button
          data-lk-focus={`change:${limit.spendingLimitId}`}
          size="sm"
          variant="secondary"
          disabled={disabled}
          aria-label={ui.t('limitsChangeLabel', { name: named })}
          onClick={onChange}
        >
          {ui.t('limitsChange')}
        </Button>
        <Button
          data-lk-focus={`remove:${limit.spendingLimitId}`}
          size="sm"
          variant="danger"
          disabled={disabled}
          aria-label={ui.t('limitsRemoveLabel', { name: named })}
          onClick={onRemove}
        >
          {ui.t('limitsRemove')}
        </Button>
      </span>
    </>
  )
}

/**
 * `limit`'s name, with what it applies to when another limit listed has the same one ("Daily limit
 * of 1 ETH (All my accounts)", "… (0x1234…cdef)"), so that their Change and Remove buttons are
 * told apart by name, as a screen reader lists them.
 */
function namedApart(ui: Ui<LimitsKey>, limit: SpendingLimit, listed: readonly SpendingLimit[]): string {
  const name = limit.spendingLimitName
  if (listed.filter((other) => other.spendingLimitName === name).length < 2) return name
  const { scope } = limit
  return `${name} (${
    scope.type === 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT'
      ? `${scope.address.slice(0, 6)}…${scope.address.slice(-4)}`
      : ui.t('limitsScopeUser')
  })`
}

/**
 * A new limit (amount, period, and the user's whole account or one wallet account), or a new amount
 * for `limit`. `onSubmit` gets the change to run; while it runs the form is disabled.
 */
function LimitForm({
  ui,
  caip2,
  limit,
  accounts = [],
  userId,
  onCancel,
  onSubmit,
}: {
  ui: Ui<LimitsKey>
  caip2: string
  limit?: SpendingLimit | undefined
  accounts?: string[]
  userId?: string | undefined
  onCancel: () => void
  /** `name`: the limit's name once changed (it follows its amount when it was named by it). */
  onSubmit: (change: () => Promise<unknown>, name?: string) => Promise<void>
}) {
  const id = useId()
  const create = useCreateSpendingLimit()
  const update = useUpdateSpendingLimit()
  // A limit being changed keeps its own asset's unit; a new one is in the chain's native unit.
  const decimals =
    limit && limit.asset.type === 'SPENDING_LIMIT_ASSET_NATIVE'
      ? nativeOf(limit.asset.caip2).decimals
      : limit
        ? 0
        : nativeOf(caip2).decimals
  const unit =
    limit && limit.asset.type !== 'SPENDING_LIMIT_ASSET_NATIVE'
      ? ui.t('limitUnits', { amount: '' }).trim()
      : nativeOf(limit?.asset.caip2 ?? caip2).symbol
  const [amount, setAmount] = useState(limit ? typedUnits(BigInt(limit.amount), decimals, ui.locale) : '')
  const [period, setPeriod] = useState<SpendingLimitPeriod>('PERIOD_DAY')
  const [scope, setScope] = useState('user')
  // Why a submit refused the amount as it was then.
  const [amountError, setAmountError] = useState<FieldError>()
  const [pending, setPending] = useState(false)
  const amountField = useRef<HTMLInputElement>(null)

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    const read = checkAmount(amount, decimals, ui.locale, 'agentTokenAmountInvalid')
    const units = 'units' in read ? read.units : undefined
    setAmountError('error' in read ? read.error : undefined)
    if (units === undefined || (!limit && !userId)) {
      amountField.current?.focus()
      return
    }
    setPending(true)
    // A limit named by its amount is renamed with it ("Daily limit of 2 ETH").
    const asset = limit?.asset
    const renamed =
      limit &&
      asset?.type === 'SPENDING_LIMIT_ASSET_NATIVE' &&
      limit.spendingLimitName === limitName(ui, asset.caip2, BigInt(limit.amount), limit.window.period)
        ? limitName(ui, asset.caip2, units, limit.window.period)
        : undefined
    await onSubmit(() => {
      if (!limit)
        return create.mutateAsync({
          spendingLimitName: limitName(ui, caip2, units, period),
          scope:
            scope === 'user'
              ? { type: 'SPENDING_LIMIT_SCOPE_USER', userId: userId as string }
              : { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: scope },
          window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period },
          asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2 },
          amount: units.toString(),
        })
      return update.mutateAsync({
        spendingLimitId: limit.spendingLimitId,
        amount: units.toString(),
        ...(renamed ? { spendingLimitName: renamed } : {}),
      })
    }, renamed)
    setPending(false)
  }

  return (
    <form
      className="lk-stack lk-grow"
      style={{ flexBasis: '100%', minWidth: 0 }}
      onSubmit={(event) => void submit(event)}
      noValidate
      aria-label={limit ? ui.t('limitsChangeLabel', { name: limit.spendingLimitName }) : ui.t('limitsAdd')}
      onKeyDown={(event) => {
        if (event.key === 'Escape' && !pending) onCancel()
      }}
    >
      <LimitFields
        ui={ui}
        id={id}
        amountLabel={ui.t('agentAmountIn', { unit })}
        amount={amount}
        onAmountChange={(value) => {
          setAmount(value)
          // The error is for the amount as it was; it is checked again on the next submit.
          setAmountError(undefined)
        }}
        placeholder="0.5"
        amountError={amountError ? ui.t(amountError.key, amountError.values) : undefined}
        period={limit ? undefined : period}
        onPeriodChange={setPeriod}
        disabled={pending}
        autoFocus
        amountRef={amountField}
      />
      {limit ? null : (
        <div className="lk-field">
          <label className="lk-label" htmlFor={`${id}-scope`}>
            {ui.t('limitsScope')}
          </label>
          <select
            id={`${id}-scope`}
            className="lk-select"
            value={scope}
            disabled={pending}
            onChange={(event) => setScope(event.target.value)}
          >
            <option value="user">{ui.t('limitsScopeUser')}</option>
            {accounts.map((address) => (
              <option key={address} value={address}>
                {address}
              </option>
            ))}
          </select>
        </div>
      )}
      <div className="lk-row" data-wrap="">
        <Button type="submit" loading={pending}>
          {limit ? ui.t('limitsSave') : ui.t('limitsAdd')}
        </Button>
        <Button variant="ghost" onClick={onCancel} disabled={pending}>
          {ui.t('cancel')}
        </Button>
      </div>
    </form>
  )
}
