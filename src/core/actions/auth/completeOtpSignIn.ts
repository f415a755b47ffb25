import type { OtpType } from '@latchkey/protocol'
import type { Latchkey } from '../../types.ts'
import { addSessionFromJwt } from '../../session/sessions.ts'
import type { Session } from '../../session/types.ts'
import { clientSignature } from '../../stampers/clientSignature.ts'
import { getAccount } from '../proxy/getAccount.ts'
import { proxyOtpLogin } from '../proxy/proxyOtpLogin.ts'
import { proxyOtpVerify } from '../proxy/proxyOtpVerify.ts'
import { proxySignup } from '../proxy/proxySignup.ts'
import { sessionLifetimeSeconds } from './loadWalletKitConfig.ts'
import { withSessionKey } from './withSessionKey.ts'

export type CompleteOtpSignInParameters = {
  otpId: string
  otpCode: string
  otpType: OtpType
  contact: string
  /** Name of the user created when there is no account yet. @default the contact */
  userName?: string | undefined
  signal?: AbortSignal | undefined
}
export type CompleteOtpSignInReturnType = {
  session: Session
  /** True when this sign-in created the account (sign-up). */
  created: boolean
}

/**
 * Step 2 of e-mail/SMS sign-in: `otp_verify` binds the code to a new non-extractable key, the
 * `account` lookup decides login vs sign-up (`signup` with the verification token), and
 * `otp_login` with the key's `client_signature` returns the session.
 */
export function completeOtpSignIn(
  client: Latchkey,
  parameters: CompleteOtpSignInParameters,
): Promise<CompleteOtpSignInReturnType> {
  const { signal } = parameters
  return withSessionKey(client, async (key) => {
    const { verificationToken } = await proxyOtpVerify(
      client,
      { otpId: parameters.otpId, otpCode: parameters.otpCode.trim(), public_key: key.publicKey },
      { signal },
    )
    const isEmail = parameters.otpType === 'OTP_TYPE_EMAIL'
    let { organizationId } = await getAccount(
      client,
      { filterType: isEmail ? 'EMAIL' : 'PHONE_NUMBER', filterValue: parameters.contact, verificationToken },
      { signal },
    )
    const created = !organizationId
    if (!organizationId) {
      const signup = await proxySignup(
        client,
        {
          userName: parameters.userName ?? parameters.contact,
          ...(isEmail ? { userEmail: parameters.contact } : { userPhoneNumber: parameters.contact }),
          verificationToken,
          apiKeys: [],
          authenticators: [],
          oauthProviders: [],
        },
        { signal },
      )
      organizationId = signup.organizationId
    }
    const { session } = await proxyOtpLogin(
      client,
      {
        verificationToken,
        publicKey: key.publicKey,
        client_signature: await clientSignature(key, verificationToken),
        expirationSeconds: String(await sessionLifetimeSeconds(client)),
        organizationId,
      },
      { signal },
    )
    return {
      session: addSessionFromJwt(client, { session, method: 'otp', label: parameters.contact }),
      created,
    }
  })
}
