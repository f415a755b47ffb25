import type { SpendingLimitPeriod } from '@latchkey/protocol'
import type { Ref } from 'react'
import type { Ui } from '../ui/useUi.ts'
import { PERIOD_LABEL, PERIODS } from './allowance.ts'

export interface LimitFieldsProps {
  ui: Ui<'agentPeriod' | (typeof PERIOD_LABEL)[SpendingLimitPeriod]>
  /** The form's `useId()`: the fields are `{id}-amount` and `{id}-period`, the error `{id}-amount-error`. */
  id: string
  /** The amount's label, with its unit: "Amount (ETH)". */
  amountLabel: string
  amount: string
  onAmountChange: (amount: string) => void
  placeholder: string
  /** What is wrong with the amount, in words; the field is then invalid and described by it. */
  amountError?: string | undefined
  /** The period chosen; `undefined` leaves the choice out (a limit's period does not change). */
  period?: SpendingLimitPeriod | undefined
  onPeriodChange?: ((period: SpendingLimitPeriod) => void) | undefined
  disabled: boolean
  /** Focus the amount when the form opens (it is the form's first field). */
  autoFocus?: boolean
  amountRef?: Ref<HTMLInputElement> | undefined
}

/**
 * A limit's amount and period ("0.5" per "Day"), side by side and wrapping on a narrow screen.
 * Shared by `<SpendingLimits/>`' form and `<AgentAllowance/>`'s grant form.
 */
export function LimitFields({
  ui,
  id,
  amountLabel,
  amount,
  onAmountChange,
  placeholder,
  amountError,
  period,
  onPeriodChange,
  disabled,
  autoFocus,
  amountRef,
}: LimitFieldsProps) {
  return (
    <div className="lk-row" data-wrap="" style={{ alignItems: 'flex-start' }}>
      <div className="lk-field lk-grow" style={{ flexBasis: '8rem' }}>
        <label className="lk-label" htmlFor={`${id}-amount`}>
          {amountLabel}
        </label>
        <input
          ref={amountRef}
          id={`${id}-amount`}
          className="lk-input"
          dir="ltr"
          inputMode="decimal"
          autoComplete="off"
          value={amount}
          placeholder={placeholder}
          // biome-ignore lint/a11y/noAutofocus: the user just asked for this form; its first field
          autoFocus={autoFocus}
          disabled={disabled}
          aria-invalid={amountError ? true : undefined}
          aria-describedby={amountError ? `${id}-amount-error` : undefined}
          onChange={(event) => onAmountChange(event.target.value)}
        />
        {amountError ? (
          <p className="lk-field-error" id={`${id}-amount-error`}>
            {amountError}
          </p>
        ) : null}
      </div>
      {period === undefined ? null : (
        <div className="lk-field" style={{ flexBasis: '7rem' }}>
          <label className="lk-label" htmlFor={`${id}-period`}>
            {ui.t('agentPeriod')}
          </label>
          <select
            id={`${id}-period`}
            className="lk-select"
            value={period}
            disabled={disabled}
            onChange={(event) => onPeriodChange?.(event.target.value as SpendingLimitPeriod)}
          >
            {PERIODS.map((value) => (
              <option key={value} value={value}>
                {ui.t(PERIOD_LABEL[value])}
              </option>
            ))}
          </select>
        </div>
      )}
    </div>
  )
}
