import { p256 } from '@noble/curves/nist.js'
import { KeyStoreUnavailableError } from '../errors.ts'
import { compressPublicKey } from '../utils/ecdsa.ts'
import { hexToBytes, toBase64Url } from '../utils/encoding.ts'
import type { StoredKey } from './createKeyStore.ts'

/**
 * Imports an existing P-256 API key (its 32-byte private key in hex, as a back end keeps it in its
 * environment) as a non-extractable WebCrypto signing key: from here on only WebCrypto holds it.
 * For server-side clients and back offices; browsers generate their keys (`generateSigningKey`).
 */
export async function importSigningKey(privateKeyHex: string, scope?: string): Promise<StoredKey> {
  if (!globalThis.crypto?.subtle) throw new KeyStoreUnavailableError('WebCrypto is missing')
  if (!/^[0-9a-f]{64}$/i.test(privateKeyHex)) throw new Error('privateKeyHex must be 64 hex characters')
  const d = hexToBytes(privateKeyHex.toLowerCase())
  const point = p256.getPublicKey(d, false)
  const privateKey = await crypto.subtle.importKey(
    'jwk',
    {
      kty: 'EC',
      crv: 'P-256',
      d: toBase64Url(d),
      x: toBase64Url(point.slice(1, 33)),
      y: toBase64Url(point.slice(33)),
    },
    { name: 'ECDSA', namedCurve: 'P-256' },
    false,
    ['sign'],
  )
  d.fill(0)
  return { publicKey: compressPublicKey(point), privateKey, createdAt: Date.now(), scope }
}
