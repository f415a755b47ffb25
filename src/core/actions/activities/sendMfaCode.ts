import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import type { MfaRequiredError } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type SendMfaCodeParameters = {
  /** The `MfaRequiredError` the action threw: the code is bound to its activity. */
  challenge: MfaRequiredError<unknown>
  /** Which of the user's verified contacts: `AUTHENTICATION_TYPE_EMAIL_OTP` or `AUTHENTICATION_TYPE_SMS_OTP`. */
  type: ActivityParameters<'latchkey_send_mfa_code'>['type']
} & ActionOptions
/** `sentTo`: the contact, masked (`a***@example.com`). */
export type SendMfaCodeReturnType = ActivityResult<'latchkey_send_mfa_code'>

/**
 * Sends a one-time code to the user's verified e-mail or phone for an e-mail or SMS step of the
 * activity `challenge` waits for (`latchkey_send_mfa_code`); prove it with
 * `completeMfa({ challenge, contactCode })`. Sending again replaces the earlier code. Too many
 * sends are `RATE_LIMITED`.
 */
export async function sendMfaCode(
  client: Latchkey,
  parameters: SendMfaCodeParameters,
): Promise<SendMfaCodeReturnType> {
  const [{ challenge, type }, options] = splitOptions(parameters)
  const organizationId = options.organizationId ?? challenge.activity.organizationId
  const { result } = await submit(
    client,
    'latchkey_send_mfa_code',
    { fingerprint: challenge.fingerprint, type },
    { ...options, organizationId },
  )
  return result
}
