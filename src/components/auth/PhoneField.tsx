import { useId, useMemo, useState } from 'react'
import type { Ui } from '../ui/useUi.ts'
import type { AuthKey } from './authStrings.ts'
import { COUNTRIES, dialCodeOf, toE164 } from './countries.ts'

// Loaded lazily (React.lazy) when the phone field is shown, so e-mail-only sign-in never pays for it.

export interface PhoneValue {
  /** E.164 (`+34600111222`) when the number can be one, else null. */
  e164: string | null
  country: string
  national: string
}

export interface PhoneFieldProps {
  ui: Ui<AuthKey>
  /** `null` until the person types: the country defaults to the locale's region. */
  value: PhoneValue | null
  onChange: (value: PhoneValue) => void
  invalid?: boolean
  errorId?: string
  disabled?: boolean
}

/** The region of a locale (`es-MX` → `MX`), else of the browser's languages, else the US. */
export function defaultCountry(locale: string): string {
  const candidates = [locale, ...(typeof navigator === 'undefined' ? [] : (navigator.languages ?? []))]
  for (const tag of candidates) {
    try {
      const region = new Intl.Locale(tag).maximize().region
      if (region && dialCodeOf(region)) return region
    } catch {
      // an invalid tag: try the next one
    }
  }
  return 'US'
}

export const toPhoneValue = (country: string, national: string): PhoneValue => ({
  country,
  national,
  e164: toE164(country, national),
})

export default function PhoneField({
  ui,
  value: given,
  onChange,
  invalid,
  errorId,
  disabled,
}: PhoneFieldProps) {
  const countryId = useId()
  const numberId = useId()
  const [initial] = useState(() => toPhoneValue(defaultCountry(ui.locale), ''))
  const value = given ?? initial
  const options = useMemo(() => {
    let names: Intl.DisplayNames | undefined
    try {
      names = new Intl.DisplayNames([ui.locale, 'en'], { type: 'region' })
    } catch {
      names = undefined
    }
    const collator = new Intl.Collator(ui.locale)
    return COUNTRIES.map((c) => ({ ...c, name: names?.of(c.region) ?? c.region })).sort((a, b) =>
      collator.compare(a.name, b.name),
    )
  }, [ui.locale])

  return (
    <div className="lk-phone">
      <div className="lk-field">
        <label className="lk-label" htmlFor={countryId}>
          {ui.t('countryLabel')}
        </label>
        <select
          id={countryId}
          className="lk-select"
          value={value.country}
          disabled={disabled}
          autoComplete="tel-country-code"
          onChange={(event) => onChange(toPhoneValue(event.target.value, value.national))}
        >
          {options.map((option) => (
            <option key={option.region} value={option.region}>
              {`+${option.dial} ${option.name}`}
            </option>
          ))}
        </select>
      </div>
      <div className="lk-field">
        <label className="lk-label" htmlFor={numberId}>
          {ui.t('phoneLabel')}
        </label>
        <input
          id={numberId}
          className="lk-input"
          type="tel"
          dir="ltr"
          inputMode="tel"
          autoComplete="tel-national"
          // biome-ignore lint/a11y/noAutofocus: the field is the only thing to do on this step
          autoFocus
          placeholder={`+${dialCodeOf(value.country) ?? ''}`}
          value={value.national}
          disabled={disabled}
          aria-invalid={invalid || undefined}
          aria-describedby={invalid ? errorId : undefined}
          onChange={(event) => onChange(toPhoneValue(value.country, event.target.value))}
        />
      </div>
    </div>
  )
}
