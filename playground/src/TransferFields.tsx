import { useId } from 'react'

/** The recipient and amount fields of the transfer demos (values trimmed as typed). */
export function TransferFields({
  to,
  onToChange,
  amount,
  onAmountChange,
  unit,
}: {
  to: string
  onToChange: (to: string) => void
  amount: string
  onAmountChange: (amount: string) => void
  /** Shown in the amount's label, e.g. `ETH`. */
  unit: string
}) {
  const toId = useId()
  const amountId = useId()
  return (
    <>
      <label className="pg-field" htmlFor={toId}>
        <span>Recipient</span>
        <input
          id={toId}
          className="pg-input pg-mono"
          value={to}
          onChange={(e) => onToChange(e.target.value.trim())}
        />
      </label>
      <label className="pg-field" htmlFor={amountId}>
        <span>Amount ({unit})</span>
        <input
          id={amountId}
          className="pg-input"
          inputMode="decimal"
          value={amount}
          onChange={(e) => onAmountChange(e.target.value.trim())}
        />
      </label>
    </>
  )
}
