import type { SignedBundle } from '@latchkey/protocol'
import { BundleSignatureInvalidError, ConfigInvalidError } from '../errors.ts'
import type { Latchkey } from '../types.ts'
import { derToRaw } from '../utils/ecdsa.ts'
import { hexToBytes } from '../utils/encoding.ts'

const HEX = /^([0-9a-f]{2})+$/i

/** The configured bundle trust key, or a clear configuration error. */
export function trustedSignerOf(client: Latchkey): string {
  const key = client.config.trustedSignerPublicKey
  if (!key || !/^04[0-9a-f]{128}$/i.test(key))
    throw new ConfigInvalidError(
      'Export and import need `trustedSignerPublicKey` (uncompressed P-256 hex; `latchkey-service dev` prints it under that name)',
      'trustedSignerPublicKey',
    )
  return key.toLowerCase()
}

/**
 * Verifies a signed export/import bundle against the trusted signer key (WebCrypto ECDSA
 * P-256/SHA-256) and returns its decoded data. Any doubt is a `BundleSignatureInvalidError`.
 */
export async function verifySignedBundle<T>(bundle: string, trustedSignerPublicKey: string): Promise<T> {
  let envelope: Partial<SignedBundle>
  try {
    envelope = JSON.parse(bundle) as Partial<SignedBundle>
  } catch {
    throw new BundleSignatureInvalidError('The bundle is not JSON')
  }
  const { data, dataSignature, enclaveQuorumPublic } = envelope ?? {}
  if (
    typeof data !== 'string' ||
    !HEX.test(data) ||
    typeof dataSignature !== 'string' ||
    !HEX.test(dataSignature)
  )
    throw new BundleSignatureInvalidError('The bundle has no hex data and signature')
  if (typeof enclaveQuorumPublic !== 'string' || enclaveQuorumPublic.toLowerCase() !== trustedSignerPublicKey)
    throw new BundleSignatureInvalidError('The bundle names a signer other than the trusted one')
  const bytes = hexToBytes(data.toLowerCase())
  let valid = false
  try {
    const key = await crypto.subtle.importKey(
      'raw',
      hexToBytes(trustedSignerPublicKey) as Uint8Array<ArrayBuffer>,
      { name: 'ECDSA', namedCurve: 'P-256' },
      false,
      ['verify'],
    )
    valid = await crypto.subtle.verify(
      { name: 'ECDSA', hash: 'SHA-256' },
      key,
      derToRaw(dataSignature) as Uint8Array<ArrayBuffer>,
      bytes as Uint8Array<ArrayBuffer>,
    )
  } catch {
    valid = false
  }
  if (!valid) throw new BundleSignatureInvalidError()
  try {
    return JSON.parse(new TextDecoder().decode(bytes)) as T
  } catch {
    throw new BundleSignatureInvalidError('The bundle data is not JSON')
  }
}
