import { encodeApiKeyStamp } from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { base64urlnopad } from '@scure/base'
import { signApiKeyStamp } from '../../kernel/crypto/index.ts'

/**
 * The proxy's `X-Stamp` (P-256, DER over the body), signed with WebCrypto because every proxied
 * call is signed and native signing is far cheaper than pure JS; the key is imported for this
 * one signature and not kept. Falls back to the JS signer where WebCrypto is missing.
 */
export async function signProxyStamp(
  body: string,
  privateKey: Uint8Array,
  publicKeyHex: string,
): Promise<string> {
  const subtle = globalThis.crypto?.subtle
  if (!subtle) return signApiKeyStamp(body, { scheme: 'SIGNATURE_SCHEME_TK_API_P256', privateKey })
  const point = p256.Point.fromBytes(hexToBytes(publicKeyHex)).toBytes(false)
  const key = await subtle.importKey(
    'jwk',
    {
      kty: 'EC',
      crv: 'P-256',
      x: base64urlnopad.encode(point.subarray(1, 33)),
      y: base64urlnopad.encode(point.subarray(33)),
      d: base64urlnopad.encode(privateKey),
      ext: false,
    },
    { name: 'ECDSA', namedCurve: 'P-256' },
    false,
    ['sign'],
  )
  const raw = new Uint8Array(await subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, key, utf8ToBytes(body)))
  const der = p256.Signature.fromBytes(raw, 'compact').toBytes('der')
  return encodeApiKeyStamp({
    publicKey: publicKeyHex,
    scheme: 'SIGNATURE_SCHEME_TK_API_P256',
    signature: bytesToHex(der),
  })
}
