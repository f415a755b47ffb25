import { createPublicKey, type JsonWebKey, type KeyObject, verify } from 'node:crypto'
import { p256 } from '@noble/curves/nist.js'
import { hexToBytes } from '@noble/hashes/utils.js'

/**
 * Copies of each public key, taken in turn. A verification in the thread pool holds its key
 * object's lock, and starting the next one on the same object waits for it on the thread that
 * serves requests: a back end stamping every request with one API key made each stamp wait for the
 * one before it (issue 42: the largest share of the main thread's time under load). With as many
 * copies as the pool runs verifications at once (and some more, as they finish out of order), no
 * two of them share one.
 */
const COPIES = 8

const keys = new Map<string, { jwk: JsonWebKey; copies: KeyObject[]; next: number }>()

function keyOf(publicKeyHex: string): KeyObject {
  let entry = keys.get(publicKeyHex)
  if (!entry) {
    const point = p256.Point.fromBytes(hexToBytes(publicKeyHex)).toBytes(false)
    const coordinate = (from: number) => Buffer.from(point.subarray(from, from + 32)).toString('base64url')
    const jwk = { kty: 'EC', crv: 'P-256', x: coordinate(1), y: coordinate(33) }
    entry = { jwk, copies: [createPublicKey({ key: jwk, format: 'jwk' })], next: 0 }
    if (keys.size >= 1000) keys.clear()
    keys.set(publicKeyHex, entry)
  }
  const index = entry.next
  entry.next = (index + 1) % COPIES
  let key = entry.copies[index]
  if (!key) {
    key = createPublicKey({ key: entry.jwk, format: 'jwk' })
    entry.copies[index] = key
  }
  return key
}

/**
 * P-256 stamp verification with Node's crypto (OpenSSL, in libuv's thread pool): the DER signature
 * as it comes, SHA-256 over the body. About half WebCrypto's cost on the thread that serves
 * requests; pass it as `createService({ verifyP256 })` (the CLI does). A signature that does not
 * parse or does not verify is false.
 */
export function nativeVerifyP256(
  publicKeyHex: string,
  signatureHex: string,
  body: Uint8Array,
): Promise<boolean> {
  return new Promise((resolve) => {
    try {
      verify('sha256', body, keyOf(publicKeyHex), Buffer.from(signatureHex, 'hex'), (error, valid) =>
        resolve(!error && valid),
      )
    } catch {
      resolve(false)
    }
  })
}
