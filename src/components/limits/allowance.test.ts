import { describe, expect, it } from 'vitest'
import { formatAt, unitsOf } from './allowance.ts'

describe('unitsOf', () => {
  it('reads an amount as typed with Latin digits', () => {
    expect(unitsOf('0.3')).toBe(3n * 10n ** 17n)
    expect(unitsOf(' 2 ')).toBe(2n * 10n ** 18n)
    expect(unitsOf('25', 6)).toBe(25_000_000n)
  })

  it('reads Arabic-Indic and Persian digits and the Arabic decimal separator, as an Arabic keyboard types them', () => {
    expect(unitsOf('٠٫٣')).toBe(3n * 10n ** 17n)
    expect(unitsOf('١٢')).toBe(12n * 10n ** 18n)
    expect(unitsOf('۱٫۵')).toBe(15n * 10n ** 17n)
  })

  it('refuses what is not an amount above zero with at most the unit’s decimals', () => {
    for (const text of ['', '-1', '0', '1e6', '0x000000000000000000000000000000000000dEaD', '٠', '١٬٠٠٠'])
      expect(unitsOf(text)).toBeUndefined()
    expect(unitsOf(`0.${'1'.repeat(19)}`)).toBeUndefined()
    expect(unitsOf('9'.repeat(80))).toBeUndefined()
  })
})

describe('formatAt', () => {
  // Local times: the format reads the clock in the runtime's time zone, as the check does.
  const at = (day: number, hour: number, minute = 0) => new Date(2026, 11, day, hour, minute).getTime()

  it('gives the clock time alone for a moment later today', () => {
    expect(formatAt(at(2, 14), at(2, 9, 41), 'en')).toMatch(/^2:00\sPM$/)
  })

  it('gives the date too for tomorrow, even within 24 hours (a daily spend frees then)', () => {
    expect(formatAt(at(3, 9, 41), at(2, 9, 41), 'en')).toMatch(/^Dec 3, 2026, 9:41\sAM$/)
    expect(formatAt(at(3, 0, 5), at(2, 23, 55), 'en')).toMatch(/^Dec 3, 2026, 12:05\sAM$/)
    expect(formatAt(at(9, 9, 41), at(2, 9, 41), 'en')).toMatch(/^Dec 9, 2026, 9:41\sAM$/)
  })
})
