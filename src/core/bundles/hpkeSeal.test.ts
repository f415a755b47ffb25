import { hpkeOpen } from '@latchkey/protocol/hpke'
import { p256 } from '@noble/curves/nist.js'
import { describe, expect, it } from 'vitest'
import { hpkeSeal } from './hpkeSeal.ts'

describe('hpkeSeal (WebCrypto)', () => {
  it('seals what the protocol HPKE (noble, as the service runs it) opens, and nothing else opens it', async () => {
    const receiverPrivate = p256.utils.randomSecretKey()
    const receiverPublicKey = p256.getPublicKey(receiverPrivate, false)
    const plaintext = new TextEncoder().encode(JSON.stringify({ otp_code: '123456', public_key: '02ab' }))
    const sealed = await hpkeSeal({ plaintext, receiverPublicKey })
    const dh = (sender: Uint8Array) => p256.getSharedSecret(receiverPrivate, sender, true).slice(1)
    expect(await hpkeOpen({ ciphertext: sealed, receiverPublicKey, dh })).toEqual(plaintext)
    // A fresh ephemeral key each time.
    expect((await hpkeSeal({ plaintext, receiverPublicKey })).encappedPublic).not.toBe(sealed.encappedPublic)
    // Tampered ciphertext, or another receiver, does not open.
    const flipped = `${sealed.ciphertext.slice(0, -2)}${sealed.ciphertext.endsWith('00') ? '01' : '00'}`
    await expect(
      hpkeOpen({ ciphertext: { ...sealed, ciphertext: flipped }, receiverPublicKey, dh }),
    ).rejects.toThrow()
    const other = p256.utils.randomSecretKey()
    await expect(
      hpkeOpen({
        ciphertext: sealed,
        receiverPublicKey: p256.getPublicKey(other, false),
        dh: (sender) => p256.getSharedSecret(other, sender, true).slice(1),
      }),
    ).rejects.toThrow()
  })

  it('takes only an uncompressed P-256 key', async () => {
    const compressed = p256.getPublicKey(p256.utils.randomSecretKey(), true)
    await expect(hpkeSeal({ plaintext: new Uint8Array([1]), receiverPublicKey: compressed })).rejects.toThrow(
      /uncompressed/,
    )
  })
})
