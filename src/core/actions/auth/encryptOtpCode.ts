import { hpkeSeal } from '../../bundles/hpkeSeal.ts'
import { trustedSignerOf, verifySignedBundle } from '../../bundles/verifySignedBundle.ts'
import { BundleMismatchError } from '../../errors.ts'
import type { Latchkey } from '../../types.ts'
import { hexToBytes, utf8ToBytes } from '../../utils/encoding.ts'

/**
 * `otp_verify_v2`'s `encryptedOtpBundle`: the code and the key to bind, HPKE-encrypted to the
 * target of `otp_init_v2`'s `otpEncryptionTargetBundle`, after checking that bundle's signature
 * against the configured `trustedSignerPublicKey` (so only the service can read the code).
 */
export async function encryptOtpCode(
  client: Latchkey,
  parameters: { otpEncryptionTargetBundle: string; otpCode: string; publicKey: string },
): Promise<string> {
  const data = await verifySignedBundle<{ organizationId?: string; targetPublic: string }>(
    parameters.otpEncryptionTargetBundle,
    trustedSignerOf(client),
  )
  if (data.organizationId !== undefined && data.organizationId !== client.config.organizationId)
    throw new BundleMismatchError('organizationId')
  const sealed = await hpkeSeal({
    plaintext: utf8ToBytes(
      JSON.stringify({ otp_code: parameters.otpCode, public_key: parameters.publicKey }),
    ),
    receiverPublicKey: hexToBytes(data.targetPublic),
  })
  return JSON.stringify(sealed)
}
