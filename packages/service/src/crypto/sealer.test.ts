import { hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { createSealer } from './sealer.ts'

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
