import { refuseFields } from '../../domain/params.ts'
import { normalizeSessionPublicKey } from '../../domain/sessions.ts'
import { defineActivity } from '../../kernel/registry.ts'
import { dropOtpEncryptionTarget, openEncryptedOtp } from '../otp/otpEncryptionTarget.ts'
import { signInState } from '../signInState.ts'
import { inParameters } from './initOtp.ts'

/** Longest a verification token lives: a caller may shorten it, never extend it. */
export const MAX_TOKEN_SECONDS = 600

/** The version whose code (and key to bind) arrive encrypted to `INIT_OTP_V3`'s target. */
const ENCRYPTED_TYPE = 'ACTIVITY_TYPE_VERIFY_OTP_V2'

/**
 * Checks a one-time code and returns a verification token (JWT: id, verification_type, contact,
 * public_key, exp) bound to the caller's public key. Wrong codes count even though the activity
 * fails; the fifth one kills the code. `VERIFY_OTP_V2` sends the code and the key HPKE-encrypted
 * to the target `INIT_OTP_V3` returned (`encryptedOtpBundle`), opened here, then checked alike.
 * The token is answered to the request that verified the code and never stored (`shownOnce`): one
 * bound to no key logs in as the contact's user, so no other reader of the organization may take it
 * from `get_activity`; a replay of the request shows it emptied (verify a new code). The code it
 * checks is no reader's to take from its record either (`bearerParameters`): one refused before it
 * was compared (the contact's guess budget full) is still live, and verified later it logs in.
 */
export const verifyOtp = defineActivity('verify_otp', {
  allowNonRoot: true,
  skipConsensus: true,
  shownOnce: ['verificationToken'],
  bearerParameters: ['otpCode', 'encryptedOtpBundle'],
  parse: (r, type) => {
    const expirationSeconds = r.optUintString('expirationSeconds', { max: 86_400 })
    const otpId = r.string('otpId', { max: 200 })
    const expiration = expirationSeconds !== undefined ? { expirationSeconds } : {}
    if (type === ENCRYPTED_TYPE) {
      refuseFields(r, ['otpCode', 'publicKey'], type)
      return { otpId, encryptedOtpBundle: r.string('encryptedOtpBundle', { max: 4096 }), ...expiration }
    }
    refuseFields(r, ['encryptedOtpBundle'], type)
    const publicKey = r.optString('publicKey', { max: 200 })
    return {
      otpId,
      otpCode: r.string('otpCode', { max: 20 }),
      ...(publicKey !== undefined
        ? { publicKey: normalizeSessionPublicKey(publicKey, r.field('publicKey')) }
        : {}),
      ...expiration,
    }
  },
  // The attempt is counted in its own transaction, so a wrong code counts though the activity fails.
  prepare: (ctx, p) =>
    inParameters(async () => {
      const encrypted = 'encryptedOtpBundle' in p
      const { otpCode, publicKey } = encrypted
        ? await openEncryptedOtp(ctx.runtime, ctx.organization.id, p.otpId, p.encryptedOtpBundle)
        : p
      const { verificationToken } = await signInState(ctx.runtime).otp.verify({
        organizationId: ctx.organization.id,
        otpId: p.otpId,
        otpCode,
        ...(publicKey !== undefined ? { publicKey } : {}),
        ...(p.expirationSeconds !== undefined
          ? { tokenExpirationSeconds: Math.min(MAX_TOKEN_SECONDS, Math.max(60, Number(p.expirationSeconds))) }
          : {}),
      })
      if (encrypted) await dropOtpEncryptionTarget(ctx.runtime, p.otpId)
      return { verificationToken }
    }),
  run: (ctx) => ctx.prepared as { verificationToken: string },
})
