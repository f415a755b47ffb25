import { normalizeSessionPublicKey } from '../../domain/sessions.ts'
import { defineActivity } from '../../registry.ts'
import { signInState } from '../signInState.ts'
import { inParameters } from './initOtp.ts'

/** Longest a verification token lives: a caller may shorten it, never extend it. */
export const MAX_TOKEN_SECONDS = 600

/**
 * Checks a one-time code and returns a verification token (JWT: id, verification_type, contact,
 * public_key, exp) bound to the caller's public key. Wrong codes count even though the activity
 * fails; the fifth one kills the code.
 */
export const verifyOtp = defineActivity('verify_otp', {
  allowNonRoot: true,
  skipConsensus: true,
  parse: (r) => {
    const publicKey = r.optString('publicKey', { max: 200 })
    const expirationSeconds = r.optUintString('expirationSeconds', { max: 86_400 })
    return {
      otpId: r.string('otpId', { max: 200 }),
      otpCode: r.string('otpCode', { max: 20 }),
      ...(publicKey !== undefined
        ? { publicKey: normalizeSessionPublicKey(publicKey, r.field('publicKey')) }
        : {}),
      ...(expirationSeconds !== undefined ? { expirationSeconds } : {}),
    }
  },
  // The attempt is counted in its own transaction, so a wrong code counts though the activity fails.
  prepare: (ctx, p) =>
    inParameters(async () => {
      const { verificationToken } = await signInState(ctx.runtime).otp.verify({
        organizationId: ctx.organization.id,
        otpId: p.otpId,
        otpCode: p.otpCode,
        ...(p.publicKey !== undefined ? { publicKey: p.publicKey } : {}),
        ...(p.expirationSeconds !== undefined
          ? { tokenExpirationSeconds: Math.min(MAX_TOKEN_SECONDS, Math.max(60, Number(p.expirationSeconds))) }
          : {}),
      })
      return { verificationToken }
    }),
  run: (ctx) => ctx.prepared as { verificationToken: string },
})
