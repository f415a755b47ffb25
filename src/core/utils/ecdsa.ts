import { bytesToHex, hexToBytes } from './encoding.ts'

// A key store only compresses public keys: that lives apart (compressPublicKey.ts), so start-up
// code that creates the key store does not bundle the signature helpers below.
export { compressPublicKey } from './compressPublicKey.ts'

/** Order of the P-256 group, to keep signatures low-S (the service rejects high-S ones). */
const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n

const toBigInt = (bytes: Uint8Array) => BigInt(`0x${bytesToHex(bytes) || '0'}`)
const to32 = (value: bigint) => hexToBytes(value.toString(16).padStart(64, '0'))

/** Normalises a raw P-256 r‖s signature (64 bytes, as WebCrypto returns it) to low-S. */
export function lowS(rawSignature: Uint8Array): Uint8Array {
  const s = toBigInt(rawSignature.subarray(32, 64))
  if (s <= P256_N >> 1n) return rawSignature
  const out = new Uint8Array(64)
  out.set(rawSignature.subarray(0, 32), 0)
  out.set(to32(P256_N - s), 32)
  return out
}

const derInteger = (bytes: Uint8Array): Uint8Array => {
  let start = 0
  while (start < bytes.length - 1 && bytes[start] === 0) start++
  const trimmed = bytes.subarray(start)
  const pad = (trimmed[0] as number) & 0x80 ? 1 : 0
  const out = new Uint8Array(2 + pad + trimmed.length)
  out[0] = 0x02
  out[1] = pad + trimmed.length
  out.set(trimmed, 2 + pad)
  return out
}

/** ASN.1 DER hex of a raw r‖s signature. */
export function rawToDer(rawSignature: Uint8Array): string {
  const r = derInteger(rawSignature.subarray(0, 32))
  const s = derInteger(rawSignature.subarray(32, 64))
  const out = new Uint8Array(2 + r.length + s.length)
  out[0] = 0x30
  out[1] = r.length + s.length
  out.set(r, 2)
  out.set(s, 2 + r.length)
  return bytesToHex(out)
}

/** Raw 64-byte r‖s of a DER-encoded ECDSA signature; throws on anything else. */
export function derToRaw(derHex: string): Uint8Array {
  const der = hexToBytes(derHex)
  const fail = () => {
    throw new Error('not a DER ECDSA signature')
  }
  if (der[0] !== 0x30 || der[1] !== der.length - 2) fail()
  let offset = 2
  const readInt = () => {
    if (der[offset] !== 0x02) fail()
    const length = der[offset + 1] as number
    const value = der.subarray(offset + 2, offset + 2 + length)
    if (value.length !== length || length === 0 || length > 33) fail()
    offset += 2 + length
    const trimmed = value.length === 33 ? value.subarray(1) : value
    const out = new Uint8Array(32)
    out.set(trimmed, 32 - trimmed.length)
    return out
  }
  const r = readInt()
  const s = readInt()
  if (offset !== der.length) fail()
  const raw = new Uint8Array(64)
  raw.set(r, 0)
  raw.set(s, 32)
  return raw
}

/** Signs bytes with a (non-extractable) P-256 CryptoKey: raw low-S r‖s. */
export async function signP256(privateKey: CryptoKey, data: Uint8Array): Promise<Uint8Array> {
  const signature = await crypto.subtle.sign(
    { name: 'ECDSA', hash: 'SHA-256' },
    privateKey,
    data as Uint8Array<ArrayBuffer>,
  )
  return lowS(new Uint8Array(signature))
}
