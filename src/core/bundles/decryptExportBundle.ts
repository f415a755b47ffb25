import type { ExportBundleData } from '@latchkey/protocol'
import { BundleMismatchError, BundleSignatureInvalidError } from '../errors.ts'
import type { Latchkey } from '../types.ts'
import { bytesToHex } from '../utils/encoding.ts'
import { trustedSignerOf, verifySignedBundle } from './verifySignedBundle.ts'

/** A non-extractable ECDH P-256 key pair an export is encrypted to; it lives only in memory. */
export interface ExportTarget {
  privateKey: CryptoKey
  /** Uncompressed public key bytes (65). */
  publicKey: Uint8Array
  publicKeyHex: string
}

export async function generateExportTarget(): Promise<ExportTarget> {
  const pair = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, false, ['deriveBits'])
  const publicKey = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey))
  return { privateKey: pair.privateKey, publicKey, publicKeyHex: bytesToHex(publicKey) }
}

/**
 * Verifies an export bundle's signature and organization, then opens its HPKE ciphertext with
 * ECDH done by WebCrypto on the non-extractable target key. The HPKE code loads lazily.
 */
export async function decryptExportBundle(
  client: Latchkey,
  parameters: { exportBundle: string; target: ExportTarget; organizationId: string },
): Promise<Uint8Array> {
  const data = await verifySignedBundle<ExportBundleData>(parameters.exportBundle, trustedSignerOf(client))
  if (data.organizationId !== parameters.organizationId) throw new BundleMismatchError('organizationId')
  const { hpkeOpen } = await import('@latchkey/protocol/hpke')
  try {
    return await hpkeOpen({
      ciphertext: data,
      receiverPublicKey: parameters.target.publicKey,
      dh: async (senderPublic) => {
        const sender = await crypto.subtle.importKey(
          'raw',
          senderPublic as Uint8Array<ArrayBuffer>,
          { name: 'ECDH', namedCurve: 'P-256' },
          false,
          [],
        )
        const bits = await crypto.subtle.deriveBits(
          { name: 'ECDH', public: sender },
          parameters.target.privateKey,
          256,
        )
        return new Uint8Array(bits)
      },
    })
  } catch (error) {
    throw new BundleSignatureInvalidError(`The bundle cannot be decrypted: ${(error as Error).message}`)
  }
}
