import { bytesToHex } from '@noble/hashes/utils.js'
import { CredentialError, FieldError } from '../../kernel/base/errors.ts'
import {
  CryptoInputError,
  openImportCiphertext,
  p256PublicKey,
  randomP256PrivateKey,
  signBundle,
} from '../../kernel/crypto/index.ts'
import type { Runtime } from '../../kernel/Runtime.ts'

/** How long an OTP's encryption target lives (the longest a code can live). */
const TARGET_LIFETIME_MS = 86_400_000
/** The row of an OTP's encryption target (`pluginRows`, kind `otp-target`). */
export const otpTargetRowId = (otpId: string) => `otp-target:${otpId}`
const rowId = otpTargetRowId

/**
 * `otp_init_v2`'s encryption target: a fresh P-256 key per OTP, its private half sealed under the
 * service's master key until `otp_verify_v2` opens a code with it, its public half returned in a
 * bundle signed by the service's signer key like an import bundle (`data` = `{ organizationId,
 * otpId, targetPublic }`), which is what @turnkey/crypto's `encryptOtpCodeToBundle` reads.
 */
export async function createOtpEncryptionTarget(
  runtime: Runtime,
  organizationId: string,
  otpId: string,
): Promise<string> {
  const targetPrivateKey = randomP256PrivateKey()
  const targetPublic = bytesToHex(p256PublicKey(targetPrivateKey, false))
  const sealed = runtime.seal(targetPrivateKey)
  targetPrivateKey.fill(0)
  const now = runtime.now()
  await runtime.store.transaction(async (tx) => {
    await tx.put('pluginRows', {
      id: rowId(otpId),
      kind: 'otp-target',
      organizationId,
      data: { sealedTargetPrivateKey: sealed, expiresAtMs: now + TARGET_LIFETIME_MS },
      // Swept with its code, or alone once it expired (otpStorage.ts).
      staleAt: now + TARGET_LIFETIME_MS,
      createdAt: now,
      updatedAt: now,
    })
  })
  const signerPrivateKey = runtime.signerPrivateKey()
  try {
    return signBundle({ organizationId, otpId, targetPublic }, signerPrivateKey)
  } finally {
    signerPrivateKey.fill(0)
  }
}

/**
 * Opens an `encryptedOtpBundle` (`{ encappedPublic, ciphertext }`, HPKE to the OTP's target)
 * into the code and the public key to bind. Errors name `encryptedOtpBundle`.
 */
export async function openEncryptedOtp(
  runtime: Runtime,
  organizationId: string,
  otpId: string,
  encryptedOtpBundle: string,
): Promise<{ otpCode: string; publicKey: string }> {
  const row = await runtime.store.get('pluginRows', rowId(otpId))
  const data = row?.data as { sealedTargetPrivateKey?: string; expiresAtMs?: number } | undefined
  if (!row || row.organizationId !== organizationId || !data?.sealedTargetPrivateKey)
    throw new CredentialError({
      code: 'OTP_INVALID',
      field: 'otpId',
      message: 'unknown otpId: start with otp_init_v2',
    })
  if ((data.expiresAtMs ?? 0) <= runtime.now())
    throw new CredentialError({
      code: 'OTP_EXPIRED',
      field: 'otpId',
      message: 'this code has expired; request a new one',
    })
  const targetPrivateKey = runtime.open(data.sealedTargetPrivateKey)
  let plaintext: Uint8Array
  try {
    plaintext = await openImportCiphertext({ encryptedBundle: encryptedOtpBundle, targetPrivateKey })
  } catch (error) {
    if (error instanceof CryptoInputError)
      throw new FieldError({
        field: 'encryptedOtpBundle',
        message: error.message.replace('encryptedBundle', 'encryptedOtpBundle'),
      })
    throw error
  } finally {
    targetPrivateKey.fill(0)
  }
  let parsed: { otp_code?: unknown; public_key?: unknown }
  try {
    parsed = JSON.parse(new TextDecoder().decode(plaintext))
  } catch {
    parsed = {}
  }
  if (typeof parsed.otp_code !== 'string' || typeof parsed.public_key !== 'string')
    throw new FieldError({
      field: 'encryptedOtpBundle',
      reason: 'must decrypt to {"otp_code":…,"public_key":…}',
    })
  return { otpCode: parsed.otp_code, publicKey: parsed.public_key.toLowerCase() }
}

/** Forgets an OTP's target once its code is verified. */
export async function dropOtpEncryptionTarget(runtime: Runtime, otpId: string): Promise<void> {
  await runtime.store.transaction(async (tx) => {
    if (await tx.get('pluginRows', rowId(otpId))) await tx.delete('pluginRows', rowId(otpId))
  })
}
