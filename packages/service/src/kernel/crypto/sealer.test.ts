import { hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { createSealer, masterKeyCheck, sealedVersion } from './sealer.ts'

const sealer = createSealer(hexToBytes('01'.repeat(32)))

describe('sealer', () => {
  it('round-trips strings and bytes in the v1 format with fresh nonces', () => {
    const a = sealer.seal('abandon about')
    const b = sealer.seal('abandon about')
    expect(a).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/)
    expect(a).not.toBe(b)
    expect(sealer.open(a)).toEqual(utf8ToBytes('abandon about'))
    expect(sealer.open(sealer.seal(new Uint8Array([0, 1, 255])))).toEqual(new Uint8Array([0, 1, 255]))
  })

  it('throws on tampering, another key, and malformed input', () => {
    const sealed = sealer.seal('secret')
    const [v, nonce, ct] = sealed.split('.') as [string, string, string]
    const flip = (s: string) => (s[0] === 'A' ? 'B' : 'A') + s.slice(1)
    for (const bad of [
      `${v}.${nonce}.${flip(ct)}`,
      `${v}.${flip(nonce)}.${ct}`,
      `v2.${nonce}.${ct}`,
      `${v}.${nonce}`,
      'garbage',
      `${v}.@@.${ct}`,
    ])
      expect(() => sealer.open(bad)).toThrow(
        expect.objectContaining({ name: 'CryptoInputError', field: 'sealed' }),
      )
    expect(() => createSealer(hexToBytes('02'.repeat(32))).open(sealed)).toThrow(/authentication/)
    expect(() => createSealer(new Uint8Array(16))).toThrow(expect.objectContaining({ field: 'key' }))
  })
})

describe('versioned sealer', () => {
  const one = hexToBytes('01'.repeat(32))
  const two = hexToBytes('02'.repeat(32))
  const both = createSealer([
    { version: 1, key: one },
    { version: 2, key: two },
  ])

  it('seals version 1 in the v1 format and later versions naming their version; opens every held version', () => {
    const old = sealer.seal('s')
    expect(sealedVersion(old)).toBe(1)
    const fresh = both.seal('s')
    expect(fresh).toMatch(/^v2\.2\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/)
    expect(sealedVersion(fresh)).toBe(2)
    expect(both.open(old)).toEqual(utf8ToBytes('s'))
    expect(both.open(fresh)).toEqual(utf8ToBytes('s'))
    expect(both.open(both.seal('t', 1))).toEqual(utf8ToBytes('t'))
    expect(both.versions).toEqual([1, 2])
  })

  it('refuses a version it does not hold, and a value relabelled with another version', () => {
    expect(() => sealer.open(both.seal('s'))).toThrow(/version 2, which this process was not given/)
    const [, , nonce, ciphertext] = both.seal('s').split('.')
    expect(() =>
      createSealer([
        { version: 2, key: two },
        { version: 3, key: two },
      ]).open(`v2.3.${nonce}.${ciphertext}`),
    ).toThrow(/authentication/)
    expect(sealedVersion('v2.1.a.b')).toBeUndefined()
    expect(masterKeyCheck(one)).not.toBe(masterKeyCheck(two))
  })
})
