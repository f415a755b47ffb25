import { describe, expect, it } from 'vitest'
import { enSpending } from '../i18n/en/spending.ts'
import { translateWith } from '../i18n/strings.ts'
import {
  amountRefusal,
  formatAmount,
  formatAt,
  nameOnScreen,
  readAmount,
  typedUnits,
  unitsOf,
} from './allowance.ts'

describe('unitsOf', () => {
  it('reads an amount as typed with Latin digits', () => {
    expect(unitsOf('0.3')).toBe(3n * 10n ** 17n)
    expect(unitsOf(' 2 ')).toBe(2n * 10n ** 18n)
    expect(unitsOf('25', 6)).toBe(25_000_000n)
  })

  it('reads full-width digits, point and comma, as a Chinese or Japanese input method types them', () => {
    expect(unitsOf('０．５')).toBe(5n * 10n ** 17n)
    expect(unitsOf('１２')).toBe(12n * 10n ** 18n)
    expect(unitsOf('０，２５', 18, 'es')).toBe(25n * 10n ** 16n)
    expect(readAmount('１，０００')).toEqual({ problem: 'ambiguous' })
    expect(unitsOf('1,000,000', 18, 'ja')).toBe(10n ** 24n)
    // Nothing else folds into a digit: `1²` is no amount, not 12.
    expect(unitsOf('1²')).toBeUndefined()
    expect(unitsOf('①')).toBeUndefined()
  })

  it('reads Arabic-Indic and Persian digits and the Arabic decimal separator, as an Arabic keyboard types them', () => {
    expect(unitsOf('٠٫٣')).toBe(3n * 10n ** 17n)
    expect(unitsOf('١٢')).toBe(12n * 10n ** 18n)
    expect(unitsOf('۱٫۵')).toBe(15n * 10n ** 17n)
  })

  it('refuses what is not an amount above zero with at most the unit’s decimals', () => {
    for (const text of [
      '',
      '-1',
      '0',
      '1e6',
      '0x000000000000000000000000000000000000dEaD',
      '٠',
      '1x000',
      '1,000,00',
      '1,000٬000',
    ])
      expect(unitsOf(text)).toBeUndefined()
    expect(unitsOf(`0.${'1'.repeat(19)}`)).toBeUndefined()
    expect(unitsOf('9'.repeat(80))).toBeUndefined()
  })
})

describe('readAmount', () => {
  const ETH = 10n ** 18n
  it('reads a thousands separator where it can be nothing else, as each locale writes it', () => {
    expect(readAmount('1,000,000', 18, 'en')).toEqual({ units: 1_000_000n * ETH })
    expect(readAmount('1,000.5', 18, 'en')).toEqual({ units: (10_005n * ETH) / 10n })
    expect(readAmount('1.000.000', 18, 'es')).toEqual({ units: 1_000_000n * ETH })
    expect(readAmount('1.000,5', 18, 'es')).toEqual({ units: (10_005n * ETH) / 10n })
    // Arabic's own separator is never a decimal mark; a French space or a Swiss apostrophe neither.
    expect(readAmount('١٬٠٠٠', 18, 'ar')).toEqual({ units: 1000n * ETH })
    expect(readAmount('1 000,5', 18, 'fr')).toEqual({ units: (10_005n * ETH) / 10n })
    expect(readAmount("1'000.5", 18, 'de-CH')).toEqual({ units: (10_005n * ETH) / 10n })
  })

  it('reads the locale’s decimal mark, and the other one where it cannot be a thousands separator', () => {
    expect(readAmount('1.000', 18, 'en')).toEqual({ units: ETH })
    expect(readAmount('1,000', 18, 'es')).toEqual({ units: ETH })
    expect(readAmount('0,001', 18, 'en')).toEqual({ units: ETH / 1000n })
    expect(readAmount('12,5', 18, 'en')).toEqual({ units: (125n * ETH) / 10n })
    expect(readAmount('0.5', 18, 'es')).toEqual({ units: ETH / 2n })
  })

  it('refuses one thousands separator before three digits: a thousand to some, one to others', () => {
    for (const [text, locale] of [
      ['1,000', 'en'],
      ['12,345', 'en'],
      ['1.000', 'es'],
      ['١,٠٠٠', 'ar'],
    ])
      expect(readAmount(text as string, 18, locale)).toEqual({ problem: 'ambiguous' })
    expect(amountRefusal('1,000', 'ambiguous', 'en')).toEqual({
      key: 'amountAmbiguous',
      values: { typed: '1,000', whole: '1000', point: '1.000' },
    })
    expect(amountRefusal(' 1.500 ', 'ambiguous', 'es').values).toEqual({
      typed: '1.500',
      whole: '1500',
      point: '1,500',
    })
  })

  it('tells an amount too large for the chain from one with too many decimals', () => {
    expect(readAmount('9'.repeat(80))).toEqual({ problem: 'large' })
    expect(readAmount((2n ** 256n - 1n).toString(), 0)).toEqual({ units: 2n ** 256n - 1n })
    expect(readAmount(`0.${'1'.repeat(19)}`)).toEqual({ problem: 'invalid' })
    expect(readAmount('0')).toEqual({ problem: 'invalid' })
  })
})

describe('typedUnits', () => {
  it('starts a field at an amount its locale reads back as it is (a comma as the mark in Spanish)', () => {
    const amount = 1_234_000_000_000_000_000n // 1.234 ETH: `1.234` is a thousand or one in Spanish
    expect(typedUnits(amount, 18, 'en')).toBe('1.234')
    expect(typedUnits(amount, 18, 'es')).toBe('1,234')
    for (const locale of ['en', 'es', 'ar', 'de', 'fr'])
      expect(readAmount(typedUnits(amount, 18, locale), 18, locale)).toEqual({ units: amount })
    expect(typedUnits(7n, 0, 'es')).toBe('7')
  })
})

describe('formatAmount', () => {
  const t = translateWith(enSpending, undefined, enSpending)
  const eth = { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:1' } as const
  it('writes the decimal mark of the locale (1.234 ETH reads as a thousand and more in Spanish)', () => {
    expect(formatAmount(t, 'en', eth, '1234000000000000000')).toBe('1.234\u00a0ETH')
    expect(formatAmount(t, 'es', eth, '1234000000000000000')).toBe('1,234\u00a0ETH')
    expect(formatAmount(t, 'ar', eth, '1234000000000000000')).toBe('1.234\u00a0ETH')
    expect(formatAmount(t, 'es', eth, '2000000000000000000')).toBe('2\u00a0ETH')
  })
})

describe('nameOnScreen', () => {
  it('keeps a number of a limit’s name on the line of what follows it', () => {
    expect(nameOnScreen('Límite diario de 1000000 ETH')).toBe('Límite diario de 1000000\u00a0ETH')
    expect(nameOnScreen('Main account, weekly')).toBe('Main account, weekly')
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
