import { type RefObject, useId, useLayoutEffect, useRef } from 'react'

/**
 * What a code field takes: `digits`, an authenticator app's 6 digits (numeric keypad); `contact`,
 * a code sent by e-mail or SMS (letters and digits); both offered by the platform's one-time-code
 * autofill. `recovery`, a recovery code (no autofill: it is not a code just received).
 */
export type CodeFieldKind = 'digits' | 'contact' | 'recovery'

const KINDS = {
  digits: { inputMode: 'numeric', autoComplete: 'one-time-code', maxLength: 6, pattern: '[0-9]*' },
  contact: {
    autoComplete: 'one-time-code',
    autoCapitalize: 'characters',
    spellCheck: false,
    maxLength: 9,
  },
  recovery: {
    autoComplete: 'off',
    autoCapitalize: 'characters',
    spellCheck: false,
    maxLength: 16,
  },
} as const

export interface CodeFieldProps {
  label: string
  kind: CodeFieldKind
  value: string
  onChange: (value: string) => void
  /** The step's error, if any: the field is then marked invalid and described by `errorId`. */
  error?: unknown
  /** The id of the element that says the error (an `ErrorRegion`). */
  errorId: string
  disabled?: boolean | undefined
  /** Focus the field when it appears (the step's first thing to do). @default true */
  focusOnMount?: boolean
  /** The input, for a step that moves focus back to it (after an error). */
  inputRef?: RefObject<HTMLInputElement | null>
}

/**
 * The one field a code is typed into (the step-up, e-mail/SMS codes, TOTP enrolment, linking an
 * e-mail): labelled, left-to-right in any locale, the keypad and autofill that fit its `kind`,
 * focused when it appears, and tied to its error text by `aria-describedby`.
 */
export function CodeField({
  label,
  kind,
  value,
  onChange,
  error,
  errorId,
  disabled,
  focusOnMount = true,
  inputRef,
}: CodeFieldProps) {
  const own = useRef<HTMLInputElement>(null)
  const ref = inputRef ?? own
  const id = useId()
  // biome-ignore lint/correctness/useExhaustiveDependencies: on mount only
  useLayoutEffect(() => {
    if (focusOnMount) ref.current?.focus()
  }, [])
  return (
    <div className="lk-field">
      <label className="lk-label" htmlFor={id}>
        {label}
      </label>
      <input
        ref={ref}
        id={id}
        className="lk-input"
        dir="ltr"
        value={value}
        onChange={(event) => onChange(event.target.value)}
        {...KINDS[kind]}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? errorId : undefined}
        disabled={disabled}
      />
    </div>
  )
}
