import { thenOrResume } from '../../errors.ts'
import { requireSession } from '../../session/sessions.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { startOtpSignIn } from '../auth/startOtpSignIn.ts'
import { type ActionOptions, splitOptions } from '../options.ts'
import { proxyOtpVerify } from '../proxy/proxyOtpVerify.ts'

export type StartLinkEmailParameters = {
  /** The address to link. */
  email: string
  /** The token of a solved CAPTCHA, when the proxy configuration enables one. */
  captchaToken?: string | undefined
  signal?: AbortSignal | undefined
}
export type StartLinkEmailReturnType = { otpId: string; email: string }

/**
 * Step 1 of linking an e-mail address to the signed-in account: the auth proxy sends a code to
 * it (`otp_init_v2`, as at sign-up). Finish with `linkEmail`.
 */
export async function startLinkEmail(
  client: Latchkey,
  { email, captchaToken, signal }: StartLinkEmailParameters,
): Promise<StartLinkEmailReturnType> {
  const { otpId, contact } = await startOtpSignIn(client, {
    otpType: 'OTP_TYPE_EMAIL',
    contact: email,
    captchaToken,
    signal,
  })
  return { otpId, email: contact }
}

export type LinkEmailParameters = {
  /** From `startLinkEmail`. */
  otpId: string
  email: string
  /** The code the person received. */
  otpCode: string
  /** @default the session's user */
  userId?: string | undefined
} & ActionOptions
export type LinkEmailReturnType = { userId: string }

/**
 * Step 2 of linking an e-mail address: the code goes to the auth proxy's `otp_verify` with the
 * session key as `public_key`, so the verification token is bound to it; `update_user_email`
 * stamped by that same key then stores the address verified (an e-mail sign-in finds the account
 * by it). It replaces an e-mail the user already had. A wrong code is refused by the proxy; an MFA
 * policy on the user makes it throw `MfaRequiredError` (`completeMfa` answers `{ userId }`).
 */
export async function linkEmail(
  client: Latchkey,
  parameters: LinkEmailParameters,
): Promise<LinkEmailReturnType> {
  const [{ otpId, email, otpCode, userId: given }, options] = splitOptions(parameters)
  await client.hydrate()
  const session = requireSession(client, options.sessionId)
  if (!session.publicKey) throw new TypeError('A read-only session cannot link a login')
  const { verificationToken } = await proxyOtpVerify(
    client,
    { otpId, otpCode: otpCode.trim(), public_key: session.publicKey },
    { signal: options.signal },
  )
  const userId = given ?? session.userId
  return thenOrResume(
    submit(client, 'update_user_email', { userId, userEmail: email.trim(), verificationToken }, options),
    () => ({ userId }),
  )
}
