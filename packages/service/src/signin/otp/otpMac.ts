import { hmac } from '@noble/hashes/hmac.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import type { Runtime } from '../../kernel/Runtime.ts'

/** HMAC-SHA256 under the OTP secret (`sealedSecret`), opened for each computation and wiped. */
export function otpMac(runtime: Runtime, sealedSecret: string): (message: string) => string {
  return (message) => {
    const secret = runtime.open(sealedSecret)
    try {
      return bytesToHex(hmac(sha256, secret, utf8ToBytes(message)))
    } finally {
      secret.fill(0)
    }
  }
}
