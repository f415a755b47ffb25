import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { formatHpkeBuf, hpkeDecrypt, hpkeEncrypt } from '@turnkey/crypto'
import { describe, expect, it } from 'vitest'
import { _hpkeOpenCore, _hpkeSealCore, hpkeOpen, hpkeSeal } from './hpke.ts'

/** RFC 9180 Appendix A.3.1: DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-128-GCM, mode_base. */
const A31 = {
  info: '4f6465206f6e2061204772656369616e2055726e',
  skEm: '4995788ef4b9d6132b249ce59a77281493eb39af373d236a1fe415cb0c2d7beb',
  pkEm: '04a92719c6195d5085104f469a8b9814d5838ff72b60501e2c4466e5e67b325ac98536d7b61a1af4b78e5b7f951c0900be863c403ce65c9bfcb9382657222d18c4',
  pkRm: '04fe8c19ce0905191ebc298a9245792531f26f0cece2460639e8bc39cb7f706a826a779b4cf969b8a0e539c7f62fb3d30ad6aa8f80e30f1d128aafd68a2ce72ea0',
  skRm: 'f3ce7fdae57e1a310d87f1ebbde6f328be0a99cdbcadf4d6589cf29de4b8ffd2',
  pt: '4265617574792069732074727574682c20747275746820626561757479',
  aad: '436f756e742d30',
  ct: '5ad590bb8baa577f8619db35a36311226a896e7342a6d836d8b7bcd2f20b6c7f9076ac232e3ab2523f39513434',
}

const nobleDh = (privateKey: Uint8Array) => (senderPublic: Uint8Array) =>
  p256.getSharedSecret(privateKey, senderPublic, true).slice(1)

describe('RFC 9180 core (A.3.1 vector, with the RFC’s own info and aad)', () => {
  it('seals to the published enc and ciphertext', () => {
    const { enc, ciphertext } = _hpkeSealCore({
      plaintext: hexToBytes(A31.pt),
      receiverPublicKey: hexToBytes(A31.pkRm),
      info: hexToBytes(A31.info),
      aad: hexToBytes(A31.aad),
      ephemeralPrivateKey: hexToBytes(A31.skEm),
      aead: 'AES_128_GCM',
    })
    expect({ enc: bytesToHex(enc), ct: bytesToHex(ciphertext) }).toEqual({ enc: A31.pkEm, ct: A31.ct })
  })

  it('opens the published ciphertext', async () => {
    const plaintext = await _hpkeOpenCore({
      enc: hexToBytes(A31.pkEm),
      ciphertext: hexToBytes(A31.ct),
      receiverPublicKey: hexToBytes(A31.pkRm),
      info: hexToBytes(A31.info),
      aad: hexToBytes(A31.aad),
      dh: nobleDh(hexToBytes(A31.skRm)),
      aead: 'AES_128_GCM',
    })
    expect(bytesToHex(plaintext)).toBe(A31.pt)
  })
})

describe('bundle profile (AES-256-GCM, info "turnkey_hpke", aad = enc ‖ receiver)', () => {
  const receiverPrivate = hexToBytes('aa'.repeat(32))
  const receiverPublic = p256.getPublicKey(receiverPrivate, false)

  it('round-trips, with a sync or async dh callback and a compressed receiver key', async () => {
    const plaintext = utf8ToBytes(
      'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about',
    )
    const sealed = hpkeSeal({ plaintext, receiverPublicKey: receiverPublic })
    expect(sealed.encappedPublic).toMatch(/^04[0-9a-f]{128}$/)
    expect(
      await hpkeOpen({ ciphertext: sealed, receiverPublicKey: receiverPublic, dh: nobleDh(receiverPrivate) }),
    ).toEqual(plaintext)
    const asyncDh = async (pub: Uint8Array) => nobleDh(receiverPrivate)(pub)
    const compressed = p256.getPublicKey(receiverPrivate, true)
    expect(await hpkeOpen({ ciphertext: sealed, receiverPublicKey: compressed, dh: asyncDh })).toEqual(
      plaintext,
    )
  })

  it('fails on tampering, a wrong key, or a bad dh result', async () => {
    const sealed = hpkeSeal({ plaintext: new Uint8Array([1, 2, 3]), receiverPublicKey: receiverPublic })
    const flipped = {
      ...sealed,
      ciphertext: (sealed.ciphertext[0] === '0' ? '1' : '0') + sealed.ciphertext.slice(1),
    }
    await expect(
      hpkeOpen({ ciphertext: flipped, receiverPublicKey: receiverPublic, dh: nobleDh(receiverPrivate) }),
    ).rejects.toThrow(/decryption failed/)
    const other = hexToBytes('bb'.repeat(32))
    await expect(
      hpkeOpen({ ciphertext: sealed, receiverPublicKey: receiverPublic, dh: nobleDh(other) }),
    ).rejects.toThrow(/decryption failed/)
    await expect(
      hpkeOpen({ ciphertext: sealed, receiverPublicKey: receiverPublic, dh: () => new Uint8Array(31) }),
    ).rejects.toThrow(/32-byte/)
    await expect(
      hpkeOpen({
        ciphertext: { ...sealed, encappedPublic: 'zz' },
        receiverPublicKey: receiverPublic,
        dh: nobleDh(receiverPrivate),
      }),
    ).rejects.toThrow(/hex/)
  })

  it('interoperates with the published @turnkey/crypto hpkeEncrypt/hpkeDecrypt', async () => {
    const plaintext = utf8ToBytes('secret across implementations')
    // Ours → theirs
    const sealed = hpkeSeal({ plaintext, receiverPublicKey: receiverPublic })
    const theirPlaintext = hpkeDecrypt({
      ciphertextBuf: hexToBytes(sealed.ciphertext),
      encappedKeyBuf: hexToBytes(sealed.encappedPublic),
      receiverPriv: bytesToHex(receiverPrivate),
    })
    expect(new Uint8Array(theirPlaintext)).toEqual(plaintext)
    // Theirs → ours
    const theirs = JSON.parse(
      formatHpkeBuf(hpkeEncrypt({ plainTextBuf: plaintext, targetKeyBuf: receiverPublic })),
    )
    expect(
      await hpkeOpen({ ciphertext: theirs, receiverPublicKey: receiverPublic, dh: nobleDh(receiverPrivate) }),
    ).toEqual(plaintext)
  })

  it('opens with a non-extractable WebCrypto ECDH key (the browser path)', async () => {
    const pair = (await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, false, [
      'deriveBits',
    ])) as CryptoKeyPair
    const receiverPublicKey = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey))
    const plaintext = utf8ToBytes('only the browser can read this')
    const sealed = hpkeSeal({ plaintext, receiverPublicKey })
    const dh = async (senderPublic: Uint8Array) => {
      const sender = await crypto.subtle.importKey(
        'raw',
        new Uint8Array(senderPublic),
        { name: 'ECDH', namedCurve: 'P-256' },
        false,
        [],
      )
      return new Uint8Array(
        await crypto.subtle.deriveBits({ name: 'ECDH', public: sender }, pair.privateKey, 256),
      )
    }
    expect(await hpkeOpen({ ciphertext: sealed, receiverPublicKey, dh })).toEqual(plaintext)
  })
})
