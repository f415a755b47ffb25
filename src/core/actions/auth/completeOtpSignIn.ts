import type { OtpType } from '@latchkey/protocol'
import { pendingOtpOf } from '../../session/createPendingOtpStore.ts'
import { addSessionFromJwt } from '../../session/sessions.ts'
import type { Session } from '../../session/types.ts'
import { proxy } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { getAccount } from '../proxy/getAccount.ts'
import { proxyOtpLogin } from '../proxy/proxyOtpLogin.ts'
import { proxyOtpVerify } from '../proxy/proxyOtpVerify.ts'
import { proxySignup } from '../proxy/proxySignup.ts'
import { encryptOtpCode } from './encryptOtpCode.ts'
import { sessionLifetimeSeconds } from './loadWalletKitConfig.ts'
import { signClientSignature } from './signClientSignature.ts'
import { withSessionKey } from './withSessionKey.ts'

export type CompleteOtpSignInParameters = {
  otpId: string
  otpCode: string
  otpType: OtpType
  contact: string
  /**
   * From `startOtpSignIn`: the code is HPKE-encrypted to it (`otp_verify_v2`). Found among the
   * client's pending codes by `otpId` when omitted; without it (or without `trustedSignerPublicKey`) the code goes to `otp_verify`.
   */
  otpEncryptionTargetBundle?: string | undefined
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
 * Step 2 of e-mail/SMS sign-in: the code and a new non-extractable key go to `otp_verify_v2`
 * encrypted to the service's signed target (or to `otp_verify`), which binds the token to the
 * key; the `account` lookup decides login vs sign-up (`signup` with the key's consent to the
 * account's credentials), and `otp_login` with the key's signed consent to the session key
 * (the published `clientSignature` object) returns the session.
 */
export function completeOtpSignIn(
  client: Latchkey,
  parameters: CompleteOtpSignInParameters,
): Promise<CompleteOtpSignInReturnType> {
  const { signal } = parameters
  const target =
    parameters.otpEncryptionTargetBundle ??
    pendingOtpOf(client.pendingOtps.getState(), parameters.otpId)?.otpEncryptionTargetBundle
  return withSessionKey(client, async (key) => {
    const otpCode = parameters.otpCode.trim()
    const { verificationToken } =
      target && client.config.trustedSignerPublicKey
        ? await proxy(
            client,
            'otp_verify_v2',
            {
              otpId: parameters.otpId,
              encryptedOtpBundle: await encryptOtpCode(client, {
                otpEncryptionTargetBundle: target,
                otpCode,
                publicKey: key.publicKey,
              }),
            },
            { signal },
          )
        : await proxyOtpVerify(
            client,
            { otpId: parameters.otpId, otpCode, public_key: key.publicKey },
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
      const contact = isEmail ? { email: parameters.contact } : { phoneNumber: parameters.contact }
      const signup = await proxySignup(
        client,
        {
          userName: parameters.userName ?? parameters.contact,
          ...(isEmail ? { userEmail: parameters.contact } : { userPhoneNumber: parameters.contact }),
          verificationToken,
          apiKeys: [],
          authenticators: [],
          oauthProviders: [],
          clientSignature: await signClientSignature(key, verificationToken, {
            type: 'USAGE_TYPE_SIGNUP',
            signupV2: { apiKeys: [], authenticators: [], oauthProviders: [], ...contact },
          }),
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
        clientSignature: await signClientSignature(key, verificationToken, {
          type: 'USAGE_TYPE_LOGIN',
          sessionPublicKey: key.publicKey,
        }),
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
