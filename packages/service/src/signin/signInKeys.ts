import { p256 } from '@noble/curves/nist.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import type { Runtime } from '../kernel/Runtime.ts'
import type { Reads, Transaction } from '../kernel/store/Store.ts'

const SIGN_IN_KEY_ROW = 'sign-in-key'
/** The server secret OTP codes are MACed under (sealed with the master key). */
const OTP_MAC_KEY_ROW = 'otp-mac-key'

/** The sign-in wing's secrets, sealed with the master key: opened only for the step that uses them. */
export interface SignInKeys {
  /** The P-256 sign-in key (verification tokens, service OIDC tokens), sealed. */
  sealedPrivateKey: string
  /** Its compressed public key, hex. */
  publicKey: string
  /** The 32-byte secret OTP codes are MACed under, sealed. */
  sealedOtpSecret: string
}

/** Creates the service's sign-in key and OTP MAC secret once. */
export async function bootstrapSignInKeys(tx: Transaction, runtime: Runtime): Promise<void> {
  if (!(await tx.get('pluginRows', OTP_MAC_KEY_ROW))) {
    const secret = globalThis.crypto.getRandomValues(new Uint8Array(32))
    const at = runtime.now()
    await tx.put('pluginRows', {
      id: OTP_MAC_KEY_ROW,
      kind: OTP_MAC_KEY_ROW,
      data: { sealedSecret: runtime.seal(secret) },
      createdAt: at,
      updatedAt: at,
    })
    secret.fill(0)
  }
  if (await tx.get('pluginRows', SIGN_IN_KEY_ROW)) return
  const key = p256.utils.randomSecretKey()
  const now = runtime.now()
  await tx.put('pluginRows', {
    id: SIGN_IN_KEY_ROW,
    kind: SIGN_IN_KEY_ROW,
    data: { sealedPrivateKey: runtime.seal(key), publicKey: bytesToHex(p256.getPublicKey(key, true)) },
    createdAt: now,
    updatedAt: now,
  })
  key.fill(0)
}

/** Reads the keys `bootstrapSignInKeys` made (they never change afterwards). */
export async function readSignInKeys(reads: Reads): Promise<SignInKeys> {
  const key = await reads.get('pluginRows', SIGN_IN_KEY_ROW)
  if (!key) throw new Error(`${SIGN_IN_KEY_ROW} not bootstrapped`)
  const otp = await reads.get('pluginRows', OTP_MAC_KEY_ROW)
  if (!otp) throw new Error(`${OTP_MAC_KEY_ROW} not bootstrapped`)
  const { sealedPrivateKey, publicKey } = key.data as { sealedPrivateKey: string; publicKey: string }
  return { sealedPrivateKey, publicKey, sealedOtpSecret: (otp.data as { sealedSecret: string }).sealedSecret }
}
