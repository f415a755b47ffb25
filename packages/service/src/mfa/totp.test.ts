import { utf8ToBytes } from '@noble/hashes/utils.js'
import { base32nopad } from '@scure/base'
import { describe, expect, it } from 'vitest'
import { hotp, matchTotp, otpauthUri, type TotpAlgorithm, totp, totpStep } from './totp.ts'

// RFC 6238 appendix B: the seeds are the ASCII digits repeated to the hash's length.
const SEEDS: Record<TotpAlgorithm, Uint8Array> = {
  SHA1: utf8ToBytes('12345678901234567890'),
  SHA256: utf8ToBytes('12345678901234567890123456789012'),
  SHA512: utf8ToBytes('1234567890123456789012345678901234567890123456789012345678901234'),
}
const VECTORS: [seconds: number, algorithm: TotpAlgorithm, code: string][] = [
  [59, 'SHA1', '94287082'],
  [59, 'SHA256', '46119246'],
  [59, 'SHA512', '90693936'],
  [1111111109, 'SHA1', '07081804'],
  [1111111109, 'SHA256', '68084774'],
  [1111111109, 'SHA512', '25091201'],
  [1111111111, 'SHA1', '14050471'],
  [1111111111, 'SHA256', '67062674'],
  [1111111111, 'SHA512', '99943326'],
  [1234567890, 'SHA1', '89005924'],
  [1234567890, 'SHA256', '91819424'],
  [1234567890, 'SHA512', '93441116'],
  [2000000000, 'SHA1', '69279037'],
  [2000000000, 'SHA256', '90698825'],
  [2000000000, 'SHA512', '38618901'],
  [20000000000, 'SHA1', '65353130'],
  [20000000000, 'SHA256', '77737706'],
  [20000000000, 'SHA512', '47863826'],
]

describe('TOTP (RFC 6238)', () => {
  it.each(VECTORS)('appendix B: T=%s %s → %s', (seconds, algorithm, code) => {
    expect(totp(SEEDS[algorithm], seconds * 1000, { algorithm, digits: 8, period: 30 })).toBe(code)
  })

  it('RFC 4226 appendix D: HOTP of counters 0 and 9', () => {
    expect(hotp(SEEDS.SHA1, 0)).toBe('755224')
    expect(hotp(SEEDS.SHA1, 9)).toBe('520489')
  })

  it('accepts a code one step either side, never one further, never a step at or before the last accepted', () => {
    const secret = SEEDS.SHA1
    const now = 1_700_000_000_000
    const step = totpStep(now)
    const at = (s: number) => hotp(secret, s)
    expect(matchTotp(secret, at(step), { nowMs: now, lastStep: 0 })).toBe(step)
    expect(matchTotp(secret, at(step - 1), { nowMs: now, lastStep: 0 })).toBe(step - 1)
    expect(matchTotp(secret, at(step + 1), { nowMs: now, lastStep: 0 })).toBe(step + 1)
    expect(matchTotp(secret, at(step - 2), { nowMs: now, lastStep: 0 })).toBeUndefined()
    expect(matchTotp(secret, at(step + 2), { nowMs: now, lastStep: 0 })).toBeUndefined()
    expect(matchTotp(secret, at(step), { nowMs: now, lastStep: step })).toBeUndefined()
    expect(matchTotp(secret, at(step - 1), { nowMs: now, lastStep: step })).toBeUndefined()
    expect(matchTotp(secret, '12345', { nowMs: now, lastStep: 0 })).toBeUndefined()
  })

  it('the otpauth URI carries the base32 secret, issuer and parameters', () => {
    const text = otpauthUri({ secret: SEEDS.SHA1, issuer: 'Acme Wallet', account: 'ada@example.com' })
    expect(text.startsWith('otpauth://totp/Acme%20Wallet:ada%40example.com?')).toBe(true)
    const uri = new URL(text)
    expect(base32nopad.decode(uri.searchParams.get('secret')!)).toEqual(SEEDS.SHA1)
    expect(Object.fromEntries(uri.searchParams)).toMatchObject({
      issuer: 'Acme Wallet',
      algorithm: 'SHA1',
      digits: '6',
      period: '30',
    })
  })
})
