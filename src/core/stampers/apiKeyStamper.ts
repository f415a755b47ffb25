import { encodeApiKeyStamp, STAMP_HEADER } from '@latchkey/protocol'
import type { StoredKey } from '../keyStore/createKeyStore.ts'
import { rawToDer, signP256 } from '../utils/ecdsa.ts'
import { utf8ToBytes } from '../utils/encoding.ts'
import type { Stamper } from './types.ts'

/** `X-Stamp` with a stored non-extractable P-256 key: ECDSA-SHA256 over the body, DER hex. */
export function apiKeyStamper(key: Pick<StoredKey, 'publicKey' | 'privateKey'>): Stamper {
  return {
    async stamp(body) {
      const signature = rawToDer(await signP256(key.privateKey, utf8ToBytes(body)))
      return {
        header: STAMP_HEADER,
        value: encodeApiKeyStamp({
          publicKey: key.publicKey,
          scheme: 'SIGNATURE_SCHEME_TK_API_P256',
          signature,
        }),
      }
    },
  }
}
