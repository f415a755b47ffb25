import type { ProxyResponse } from '@latchkey/protocol'
import { CredentialError } from '../../kernel/base/errors.ts'
import type { Reader } from '../../kernel/Reader.ts'
import { readClientSignature } from '../clientSignature/checkClientSignature.ts'
import { claimsOf } from './claimsOf.ts'
import type { ProxyCall } from './ProxyCall.ts'

/** `POST /v1/otp_login`: exchanges a verification token for a session in the contact's sub-organization (`otp_login`). */
export async function otpLogin(call: ProxyCall, r: Reader): Promise<ProxyResponse<'otp_login'>> {
  const verificationToken = r.string('verificationToken', { max: 8192 })
  const claims = claimsOf(verificationToken)
  const email = claims.verification_type !== 'OTP_TYPE_SMS'
  call.requireMethod(email ? 'email' : 'sms', email ? 'e-mail OTP' : 'SMS OTP')
  const contact = typeof claims.contact === 'string' ? claims.contact : ''
  if (!contact)
    throw new CredentialError({
      code: 'VERIFICATION_TOKEN_INVALID',
      field: 'verificationToken',
      reason: 'is not a verification token',
    })
  const organizationId = await call.targetOrganization(
    r,
    email ? 'EMAIL' : 'PHONE_NUMBER',
    contact,
    email ? 'e-mail address' : 'phone number',
  )
  const clientSignature = readClientSignature(r)
  const invalidateExisting = r.optBool('invalidateExisting')
  const sessionProfileId = r.optString('sessionProfileId', { max: 200 })
  const { session } = await call.submit(
    'otp_login',
    {
      verificationToken,
      publicKey: r.string('publicKey', { max: 200 }),
      expirationSeconds: call.sessionSeconds(r),
      ...(clientSignature !== undefined ? { clientSignature } : {}),
      ...(invalidateExisting !== undefined ? { invalidateExisting } : {}),
      ...(sessionProfileId !== undefined ? { sessionProfileId } : {}),
    },
    organizationId,
  )
  return { session }
}
