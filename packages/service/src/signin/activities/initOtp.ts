import { OTP_TYPES } from '@latchkey/protocol'
import { refuseFields } from '../../domain/params.ts'
import { contactKindOf, holdsVerifiedContact } from '../../domain/verifiedContact.ts'
import { ApiError, PermissionError } from '../../kernel/base/errors.ts'
import { defineActivity } from '../../kernel/registry.ts'
import { operatorOtpInit } from '../contactCodes.ts'
import { normalizeContact } from '../otp/normalizeContact.ts'
import { createOtpEncryptionTarget } from '../otp/otpEncryptionTarget.ts'
import { signInState } from '../signInState.ts'

/** Prefixes the field of a sign-in engine error with `parameters.` like every activity error. */
export async function inParameters<T>(run: () => T | Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    if (error instanceof ApiError && error.field && !error.field.startsWith('parameters.'))
      throw new ApiError(error.errorCode, error.message, `parameters.${error.field}`, error.extra)
    throw error
  }
}

/** The version that also answers the signed key `VERIFY_OTP_V2` encrypts the code to. */
const ENCRYPTED_TARGET_TYPE = 'ACTIVITY_TYPE_INIT_OTP_V3'

/**
 * Starts an e-mail or SMS one-time code: rate-limited per contact service-wide, rendered from the
 * operator's proxy settings (templates, app name, longest lifetime) and delivered (local service:
 * the dev outbox). Inside a sub-organization only a contact of one of its own users may be sent
 * a code. `emailCustomization`/`smsCustomization` are read for compatibility but never reach the
 * message: only the operator chooses what its channel sends (nor does V2's and V3's `appName`).
 * V3 also answers `otpEncryptionTargetBundle`: a fresh key, signed by the service's signer key,
 * that `VERIFY_OTP_V2` encrypts the code to.
 */
export const initOtp = defineActivity('init_otp', {
  // The auth proxy's user is not a root user; a code is no power by itself.
  allowNonRoot: true,
  skipConsensus: true,
  parse: (r, type) => {
    const otpType = r.enum('otpType', OTP_TYPES)
    const contact = normalizeContact(otpType, r.string('contact', { max: 320 }), r.field('contact'))
    const otpLength = r.optInt('otpLength', { min: 6, max: 9 })
    const expirationSeconds = r.optUintString('expirationSeconds', { max: 86_400 })
    const email = r.optObject('emailCustomization')
    const sms = r.optObject('smsCustomization')
    // INIT_OTP takes the app name in emailCustomization; V2 and V3 moved it to the top.
    const topAppName = type !== 'ACTIVITY_TYPE_INIT_OTP'
    if (topAppName && email) refuseFields(email, ['appName'], type)
    if (!topAppName) refuseFields(r, ['appName'], type)
    const appName = topAppName ? r.string('appName', { max: 100 }) : email?.optString('appName', { max: 100 })
    const logoUrl = email?.optString('logoUrl', { max: 2048 })
    const template = sms?.optString('template', { max: 1000 })
    // Set by the auth proxy after a passed CAPTCHA; an unknown pass is budgeted as usual.
    const captchaPass = r.optString('captchaPass', { max: 100 })
    return {
      ...(captchaPass !== undefined ? { captchaPass } : {}),
      otpType,
      contact,
      ...(otpLength !== undefined ? { otpLength } : {}),
      ...(expirationSeconds !== undefined ? { expirationSeconds } : {}),
      ...(topAppName ? { appName } : {}),
      ...(email
        ? {
            emailCustomization: {
              ...(appName && !topAppName ? { appName } : {}),
              ...(logoUrl ? { logoUrl } : {}),
            },
          }
        : {}),
      ...(sms ? { smsCustomization: template ? { template } : {} } : {}),
    }
  },
  // The code's budget, record and delivery commit on their own, outside the activity's transaction.
  prepare: (ctx, p) =>
    inParameters(async () => {
      const org = ctx.organization
      const reads = ctx.runtime.store
      if (org.parentOrganizationId !== undefined) {
        const email = p.otpType === 'OTP_TYPE_EMAIL'
        const users = await reads.findBy('users', 'organizationId', org.id)
        const kind = contactKindOf(p.otpType)
        if (!users.some((user) => holdsVerifiedContact(user, kind, p.contact)))
          throw new PermissionError({
            field: 'contact',
            message: users.some(
              (user) => (email ? user.userEmail?.trim().toLowerCase() : user.userPhoneNumber) === p.contact,
            )
              ? `this ${email ? 'e-mail address' : 'phone number'} is not verified: a sub-organization may send codes only to its users' verified contacts (set with a verification token, or by the parent organization)`
              : `a sub-organization may send codes only to its own users' ${email ? 'e-mail addresses' : 'phone numbers'}`,
          })
      }
      const { otpId } = await signInState(ctx.runtime).otp.init({
        ...(await operatorOtpInit(reads, {
          organization: org,
          otpType: p.otpType,
          contact: p.contact,
          ...(p.otpLength !== undefined ? { otpLength: p.otpLength } : {}),
        })),
        ...(p.expirationSeconds !== undefined ? { expirationSeconds: Number(p.expirationSeconds) } : {}),
        ...((p as { captchaPass?: string }).captchaPass !== undefined
          ? { captchaPass: (p as { captchaPass?: string }).captchaPass }
          : {}),
      })
      if (ctx.type !== ENCRYPTED_TARGET_TYPE) return { otpId }
      return { otpId, otpEncryptionTargetBundle: await createOtpEncryptionTarget(ctx.runtime, org.id, otpId) }
    }),
  run: (ctx) => ctx.prepared as { otpId: string; otpEncryptionTargetBundle?: string },
})
