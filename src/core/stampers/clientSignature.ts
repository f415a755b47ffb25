import type { StoredKey } from '../keyStore/createKeyStore.ts'
import { signP256 } from '../utils/ecdsa.ts'
import { bytesToHex, utf8ToBytes } from '../utils/encoding.ts'

/**
 * `client_signature` of `otp_login`: ECDSA-P256-SHA256 over the UTF-8 verification token with the
 * key bound at `otp_verify`, as raw r‖s hex (128 chars). Proves the caller holds that key.
 */
export async function clientSignature(
  key: Pick<StoredKey, 'privateKey'>,
  verificationToken: string,
): Promise<string> {
  return bytesToHex(await signP256(key.privateKey, utf8ToBytes(verificationToken)))
}
