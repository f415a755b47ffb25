import { createPublicKey, type KeyObject, verify } from 'node:crypto'
import { p256 } from '@noble/curves/nist.js'
import { hexToBytes } from '@noble/hashes/utils.js'

const keys = new Map<string, KeyObject>()

function keyOf(publicKeyHex: string): KeyObject {
  let key = keys.get(publicKeyHex)
  if (!key) {
    const point = p256.Point.fromBytes(hexToBytes(publicKeyHex)).toBytes(false)
    const coordinate = (from: number) => Buffer.from(point.subarray(from, from + 32)).toString('base64url')
    key = createPublicKey({
      key: { kty: 'EC', crv: 'P-256', x: coordinate(1), y: coordinate(33) },
      format: 'jwk',
    })
    if (keys.size >= 1000) keys.clear()
    keys.set(publicKeyHex, key)
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
