import type { OtpType } from '@latchkey/protocol'
import { topLevelOf } from '../domain/organizations.ts'
import { proxyConfigFor } from '../domain/proxyConfigFor.ts'
import type { ContactCodes } from '../kernel/contactCodes.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { OrganizationRow } from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Store.ts'
import { type OtpEngine, type OtpInitInput, SUB_ORGANIZATION_SEND_LIMIT } from './otp/createOtpEngine.ts'

/** Code lifetime when the operator set none (and the longest a caller may ask for then). */
const DEFAULT_OTP_SECONDS = 300

/**
 * What a code sent for `organization` takes from the operator's proxy settings: its length (a
 * floor over `otpLength`: the caller, who may be the attacker, cannot go under it), alphabet,
 * longest lifetime, app name and templates. A sub-organization's codes are budgeted too
 * (`SUB_ORGANIZATION_SEND_LIMIT`): its `init_otp` codes together, and the codes `limitUserId` asks
 * for themself (MFA codes) on that user's own share, so one user cannot spend everyone's; the
 * operator's parent organization, whose back end and auth proxy ask codes for all its users, is not.
 */
export async function operatorOtpInit(
  reads: Reads,
  {
    organization,
    otpType,
    contact,
    otpLength,
    limitUserId,
  }: {
    organization: OrganizationRow
    otpType: OtpType
    contact: string
    otpLength?: number
    limitUserId?: string
  },
): Promise<OtpInitInput> {
  const config = await proxyConfigFor(reads, organization.id)
  const settings = config?.settings
  const operator = await reads.get('organizations', config?.organizationId ?? topLevelOf(organization))
  return {
    organizationId: organization.id,
    otpType,
    contact,
    otpLength: Math.max(otpLength ?? 6, settings?.otpLength ?? 6),
    ...(settings?.otpAlphabet ? { alphabet: settings.otpAlphabet } : {}),
    maxExpirationSeconds: Number(settings?.otpExpirationSeconds ?? DEFAULT_OTP_SECONDS),
    appName: settings?.appName ?? operator?.name ?? 'Latchkey',
    ...(settings ? { emailTemplate: settings.emailTemplate, smsTemplate: settings.smsTemplate } : {}),
    ...(organization.parentOrganizationId !== undefined
      ? {
          organizationLimit: SUB_ORGANIZATION_SEND_LIMIT,
          ...(limitUserId !== undefined ? { limitUserId } : {}),
        }
      : {}),
  }
}

/** The sign-in wing's `ContactCodes` (kernel/contactCodes.ts), over its OTP engine. */
export function contactCodesOf(runtime: Runtime, otp: OtpEngine): ContactCodes {
  return {
    async send({ organizationId, userId, otpType, contact }) {
      const organization = await runtime.store.get('organizations', organizationId)
      if (!organization) throw new Error(`no organization ${organizationId}`)
      return otp.init(
        await operatorOtpInit(runtime.store, { organization, otpType, contact, limitUserId: userId }),
      )
    },
    reaches: ({ otpType, contact }) => otp.reaches(otpType, contact),
    async check({ organizationId, otpId, code }) {
      // The verification token it mints is dropped unseen: the code proves a factor, not a contact.
      const { claims } = await otp.verify({ organizationId, otpId, otpCode: code })
      return { otpType: claims.verification_type, contact: claims.contact }
    },
  }
}
