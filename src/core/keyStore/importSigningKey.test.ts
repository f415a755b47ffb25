import { p256 } from '@noble/curves/nist.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { importSigningKey } from './importSigningKey.ts'

describe('importSigningKey', () => {
  it('holds an existing API key as a non-extractable key whose signatures verify under its public key', async () => {
    const d = p256.utils.randomSecretKey()
    const key = await importSigningKey(bytesToHex(d))
    expect(key.publicKey).toBe(bytesToHex(p256.getPublicKey(d, true)))
    expect(key.privateKey.extractable).toBe(false)
    await expect(crypto.subtle.exportKey('jwk', key.privateKey)).rejects.toThrow()
    const message = new TextEncoder().encode('{"type":"ACTIVITY_TYPE_CREATE_WALLET"}')
    const signature = new Uint8Array(
      await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, key.privateKey, message),
    )
    expect(
      p256.verify(signature, message, p256.getPublicKey(d, true), { format: 'compact', lowS: false }),
    ).toBe(true)
  })

  it('refuses anything but 32 bytes of hex', async () => {
    await expect(importSigningKey('abc')).rejects.toThrow(/64 hex/)
  })
})
