import { p256 } from '@noble/curves/nist.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { compressP256, p256PublicKey, randomP256PrivateKey, uncompressP256 } from './p256.ts'

describe('P-256 helpers', () => {
  it('compress/uncompress round-trip and match noble', () => {
    const priv = randomP256PrivateKey()
    expect(priv).toHaveLength(32)
    const compressed = p256PublicKey(priv)
    const uncompressed = p256PublicKey(priv, false)
    expect(compressed).toHaveLength(33)
    expect(uncompressed).toHaveLength(65)
    expect(bytesToHex(uncompressed)).toBe(bytesToHex(p256.getPublicKey(priv, false)))
    expect(compressP256(uncompressed)).toEqual(compressed)
    expect(uncompressP256(compressed)).toEqual(uncompressed)
    expect(compressP256(compressed)).toEqual(compressed)
    expect(randomP256PrivateKey()).not.toEqual(priv)
  })

  it('refuse invalid keys with CryptoInputError', () => {
    expect(() => uncompressP256(new Uint8Array(33))).toThrow(expect.objectContaining({ field: 'publicKey' }))
    expect(() => compressP256(new Uint8Array(65))).toThrow(expect.objectContaining({ field: 'publicKey' }))
    expect(() => p256PublicKey(new Uint8Array(32))).toThrow(expect.objectContaining({ field: 'privateKey' }))
  })
})
