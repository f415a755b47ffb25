import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createSealer } from '../kernel/crypto/sealer.ts'
import { nativeGcm } from './nativeCiphers.ts'

describe("the crypto workers' OpenSSL AES-GCM", () => {
  const keys = [
    { version: 1, key: new Uint8Array(randomBytes(32)) },
    { version: 2, key: new Uint8Array(randomBytes(32)) },
  ]
  const js = createSealer(keys)
  const native = createSealer(keys, nativeGcm)

  it('opens what the JavaScript sealer sealed and seals what it opens, under each key version', () => {
    const secret = new Uint8Array(randomBytes(32))
    for (const version of [1, 2]) {
      expect(native.open(js.seal(secret, version))).toEqual(secret)
      expect(js.open(native.seal(secret, version))).toEqual(secret)
      expect(new TextDecoder().decode(native.open(js.seal('a mnemonic', version)))).toBe('a mnemonic')
    }
  })

  it('refuses a tampered value, another version’s value and one shorter than its tag, as the JavaScript one does', () => {
    const sealed = js.seal(new Uint8Array(32), 2)
    const parts = sealed.split('.')
    const body = parts.at(-1)!
    const tampered = [
      ...parts.slice(0, -1),
      `${body.slice(0, 5)}${body[5] === 'A' ? 'B' : 'A'}${body.slice(6)}`,
    ]
    // The same nonce and ciphertext under version 1's format: its additional data differs.
    const asVersion1 = ['v1', parts[2], parts[3]].join('.')
    for (const value of [tampered.join('.'), asVersion1, 'v1.AAAAAAAAAAAAAAAA.AAAA']) {
      expect(() => native.open(value)).toThrow(/failed authentication/)
      expect(() => js.open(value)).toThrow(/failed authentication/)
    }
  })
})
