import {
  type CountryCode,
  getCountries,
  getCountryCallingCode,
  parsePhoneNumberFromString,
} from 'libphonenumber-js/min'
import { useId, useMemo, useState } from 'react'
import type { Ui } from '../ui/useUi.ts'

// Loaded lazily (React.lazy) when the phone step is shown: the country metadata is the only
// sizeable data the sign-in path needs, and e-mail-only apps never download it.

export interface PhoneValue {
  /** E.164 (`+34600111222`) when the number is valid for the country, else null. */
  e164: string | null
  country: string
  national: string
}

export interface PhoneFieldProps {
  ui: Ui
  /** `null` until the person types: the country defaults to the locale's region. */
  value: PhoneValue | null
  onChange: (value: PhoneValue) => void
  invalid?: boolean
  errorId?: string
  disabled?: boolean
}

/** The region of a locale (`es-MX` → `MX`), used to preselect the country. */
export function defaultCountry(locale: string): string {
  const candidates = [locale, ...(typeof navigator === 'undefined' ? [] : (navigator.languages ?? []))]
  const countries = new Set<string>(getCountries())
  for (const tag of candidates) {
    try {
      const region = new Intl.Locale(tag).maximize().region
      if (region && countries.has(region)) return region
    } catch {
      // an invalid tag: try the next one
    }
  }
  return 'US'
}

export function toPhoneValue(country: string, national: string): PhoneValue {
  const parsed = parsePhoneNumberFromString(national, country as CountryCode)
  return { country, national, e164: parsed?.isValid() ? parsed.number : null }
}

export default function PhoneField({
  ui,
  value: given,
  onChange,
  invalid,
  errorId,
  disabled,
}: PhoneFieldProps) {
  const [initial] = useState(() => toPhoneValue(defaultCountry(ui.locale), ''))
  const value = given ?? initial
  const countryId = useId()
  const numberId = useId()
  const [names] = useState(() => {
    try {
      return new Intl.DisplayNames([ui.locale, 'en'], { type: 'region' })
    } catch {
      return undefined
    }
  })
  const options = useMemo(() => {
    const collator = new Intl.Collator(ui.locale)
    return getCountries()
      .map((code) => ({ code, name: names?.of(code) ?? code, dial: getCountryCallingCode(code) }))
      .sort((a, b) => collator.compare(a.name, b.name))
  }, [names, ui.locale])

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
            <option key={option.code} value={option.code}>
              {`${option.name} (+${option.dial})`}
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
          placeholder={`+${getCountryCallingCode(value.country as CountryCode)}`}
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
