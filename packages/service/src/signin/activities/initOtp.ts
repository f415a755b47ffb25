import { OTP_TYPES } from '@latchkey/protocol'
import { ApiError } from '../../errors.ts'
import { defineActivity } from '../../registry.ts'
import { normalizeContact } from '../otp/normalizeContact.ts'
import { proxyConfigFor, signInState } from '../signInState.ts'

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

/**
 * Starts an e-mail or SMS one-time code: rate-limited per contact, rendered from the
 * organization's proxy templates and delivered (local service: the dev outbox).
 */
export const initOtp = defineActivity('init_otp', {
  // The auth proxy's user is not a root user; a code is no power by itself.
  allowNonRoot: true,
  skipConsensus: true,
  parse: (r) => {
    const otpType = r.enum('otpType', OTP_TYPES)
    const contact = normalizeContact(otpType, r.string('contact', { max: 320 }), r.field('contact'))
    const otpLength = r.optInt('otpLength', { min: 6, max: 9 })
    const expirationSeconds = r.optUintString('expirationSeconds', { max: 86_400 })
    const email = r.optObject('emailCustomization')
    const sms = r.optObject('smsCustomization')
    const appName = email?.optString('appName', { max: 100 })
    const logoUrl = email?.optString('logoUrl', { max: 2048 })
    const template = sms?.optString('template', { max: 1000 })
    return {
      otpType,
      contact,
      ...(otpLength !== undefined ? { otpLength } : {}),
      ...(expirationSeconds !== undefined ? { expirationSeconds } : {}),
      ...(email
        ? { emailCustomization: { ...(appName ? { appName } : {}), ...(logoUrl ? { logoUrl } : {}) } }
        : {}),
      ...(sms ? { smsCustomization: template ? { template } : {} } : {}),
    }
  },
  run: (ctx, p) =>
    inParameters(() => {
      const settings = proxyConfigFor(ctx.tx, ctx.organization.id)?.settings
      return signInState(ctx.service).otp.init({
        organizationId: ctx.organization.id,
        otpType: p.otpType,
        contact: p.contact,
        ...(p.otpLength !== undefined ? { otpLength: p.otpLength } : {}),
        ...(p.expirationSeconds !== undefined ? { expirationSeconds: Number(p.expirationSeconds) } : {}),
        appName: p.emailCustomization?.appName ?? ctx.organization.name,
        ...(settings ? { emailTemplate: settings.emailTemplate } : {}),
        ...(p.smsCustomization?.template
          ? { smsTemplate: { body: p.smsCustomization.template } }
          : settings
            ? { smsTemplate: settings.smsTemplate }
            : {}),
      })
    }),
})
