import {
  CLIENT_SIGNATURE_SCHEME,
  type ClientSignature,
  type ClientSignatureUsage,
  clientSignatureMessage,
  decodeJwtClaims,
} from '@latchkey/protocol'
import type { StoredKey } from '../../keyStore/createKeyStore.ts'
import { signP256 } from '../../utils/ecdsa.ts'
import { bytesToHex, utf8ToBytes } from '../../utils/encoding.ts'

/** What the key bound at `otp_verify` consents to: a session for a key, or a sign-up's credentials. */
export type ClientSignatureConsent =
  | { type: 'USAGE_TYPE_LOGIN'; sessionPublicKey: string }
  | {
      type: 'USAGE_TYPE_SIGNUP'
      signupV2: Extract<ClientSignatureUsage, { type: 'USAGE_TYPE_SIGNUP' }>['signupV2']
    }

/**
 * The published `clientSignature` object for `otp_login` and sign-up: the key bound at
 * `otp_verify` signs a message naming the token id and what it allows (ECDSA-P256-SHA256,
 * raw r‖s hex). The service gives a session only to the key such a message names.
 */
export async function signClientSignature(
  key: Pick<StoredKey, 'privateKey' | 'publicKey'>,
  verificationToken: string,
  consent: ClientSignatureConsent,
): Promise<ClientSignature> {
  const tokenId = decodeJwtClaims<{ id: string }>(verificationToken).id
  const message = clientSignatureMessage(
    consent.type === 'USAGE_TYPE_LOGIN'
      ? { type: consent.type, tokenId, login: { publicKey: consent.sessionPublicKey } }
      : { type: consent.type, tokenId, signupV2: consent.signupV2 },
  )
  const signature = bytesToHex(await signP256(key.privateKey, utf8ToBytes(message)))
  return { message, publicKey: key.publicKey, scheme: CLIENT_SIGNATURE_SCHEME, signature }
}
