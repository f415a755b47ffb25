import { BUNDLE_HPKE_INFO_TEXT, type HpkeCiphertext } from '@latchkey/protocol'
import { bytesToHex } from '../utils/encoding.ts'

/**
 * HPKE (RFC 9180) base-mode seal with DHKEM(P-256, HKDF-SHA256), HKDF-SHA256 and AES-256-GCM on
 * the platform's WebCrypto: the bundle profile of `@latchkey/protocol/hpke` (`BUNDLE_HPKE_INFO_TEXT`,
 * AAD = enc ‖ receiver key), which the service opens. The client seals OTP codes and imported
 * secrets with it, so neither path loads a JavaScript curve or cipher.
 */

const HPKE_V1 = new TextEncoder().encode('HPKE-v1')
const INFO = new TextEncoder().encode(BUNDLE_HPKE_INFO_TEXT)
const u16 = (n: number) => new Uint8Array([(n >> 8) & 0xff, n & 0xff])
const utf8 = (text: string) => new TextEncoder().encode(text)
type Bytes = Uint8Array<ArrayBuffer>
const concat = (...parts: Uint8Array[]): Bytes => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}
const KEM_SUITE = concat(utf8('KEM'), u16(0x0010))
const HPKE_SUITE = concat(utf8('HPKE'), u16(0x0010), u16(0x0001), u16(0x0002))

async function hmac(key: Uint8Array, data: Bytes): Promise<Bytes> {
  const subtle = globalThis.crypto.subtle
  // HMAC keys may not be empty in WebCrypto; RFC 5869 pads an empty salt to the hash length anyway.
  const raw = key.length === 0 ? new Uint8Array(32) : Uint8Array.from(key)
  const hmacKey = await subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  return new Uint8Array(await subtle.sign('HMAC', hmacKey, data))
}

const labeledExtract = (suite: Uint8Array, salt: Uint8Array, label: string, ikm: Uint8Array) =>
  hmac(salt, concat(HPKE_V1, suite, utf8(label), ikm))

/** HKDF-Expand for at most one block (every length here is ≤ 32). */
async function labeledExpand(
  suite: Uint8Array,
  prk: Uint8Array,
  label: string,
  info: Uint8Array,
  length: number,
) {
  const labeled = concat(u16(length), HPKE_V1, suite, utf8(label), info)
  return (await hmac(prk, concat(labeled, new Uint8Array([1])))).slice(0, length)
}

/** Encrypts `plaintext` to an uncompressed (65-byte) P-256 public key with a fresh ephemeral key. */
export async function hpkeSeal(input: {
  plaintext: Uint8Array
  receiverPublicKey: Uint8Array
}): Promise<HpkeCiphertext> {
  const subtle = globalThis.crypto.subtle
  const receiver = Uint8Array.from(input.receiverPublicKey)
  if (receiver.length !== 65 || receiver[0] !== 4)
    throw new Error('receiverPublicKey must be an uncompressed P-256 key')
  const receiverKey = await subtle.importKey(
    'raw',
    receiver,
    { name: 'ECDH', namedCurve: 'P-256' },
    false,
    [],
  )
  const ephemeral = (await subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, false, [
    'deriveBits',
  ])) as CryptoKeyPair
  const enc = new Uint8Array(await subtle.exportKey('raw', ephemeral.publicKey))
  const dh = new Uint8Array(
    await subtle.deriveBits({ name: 'ECDH', public: receiverKey }, ephemeral.privateKey, 256),
  )
  const empty = new Uint8Array(0)
  const eaePrk = await labeledExtract(KEM_SUITE, empty, 'eae_prk', dh)
  const sharedSecret = await labeledExpand(KEM_SUITE, eaePrk, 'shared_secret', concat(enc, receiver), 32)
  const context = concat(
    new Uint8Array([0]),
    await labeledExtract(HPKE_SUITE, empty, 'psk_id_hash', empty),
    await labeledExtract(HPKE_SUITE, empty, 'info_hash', INFO),
  )
  const secret = await labeledExtract(HPKE_SUITE, sharedSecret, 'secret', empty)
  const key = await labeledExpand(HPKE_SUITE, secret, 'key', context, 32)
  const nonce = await labeledExpand(HPKE_SUITE, secret, 'base_nonce', context, 12)
  const aesKey = await subtle.importKey('raw', key, 'AES-GCM', false, ['encrypt'])
  const ciphertext = await subtle.encrypt(
    { name: 'AES-GCM', iv: nonce, additionalData: concat(enc, receiver) },
    aesKey,
    Uint8Array.from(input.plaintext),
  )
  return { encappedPublic: bytesToHex(enc), ciphertext: bytesToHex(new Uint8Array(ciphertext)) }
}
