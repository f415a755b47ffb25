import type { Activity } from '@latchkey/protocol'
import { LatchkeyError } from '../../errors.ts'
import { requireSession } from '../../session/sessions.ts'
import { webAuthnStamper } from '../../stampers/webAuthnStamper.ts'
import { submitActivity } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

/**
 * One proof of the user's second factor: exactly one of a TOTP code, a recovery code, a code sent
 * to their e-mail or phone, or a passkey.
 */
export type MfaProof =
  | { totpCode: string; recoveryCode?: undefined; passkey?: undefined; contactCode?: undefined }
  | { recoveryCode: string; totpCode?: undefined; passkey?: undefined; contactCode?: undefined }
  | {
      /** The code `sendMfaCode` sent to the user's verified e-mail or phone for this activity. */
      contactCode: string
      totpCode?: undefined
      recoveryCode?: undefined
      passkey?: undefined
    }
  | {
      /** A passkey assertion stamps `approve_activity` (the published way); ids narrow the prompt. */
      passkey: true | { allowCredentialIds?: string[] | undefined }
      totpCode?: undefined
      recoveryCode?: undefined
      contactCode?: undefined
    }

export type SatisfyMfaParameters = {
  /** `fingerprint` of the activity waiting for authenticators. */
  fingerprint: string
} & MfaProof &
  ActionOptions
/** The waiting activity in its new state: COMPLETED (it ran, once) or still waiting for another step. */
export type SatisfyMfaReturnType = Activity

/**
 * Proves one step of an activity waiting for the user's second factor: a TOTP or recovery code,
 * or the code `sendMfaCode` sent (`latchkey_satisfy_mfa`), or a passkey (`approve_activity` stamped by it). A wrong code is
 * `OTP_INVALID`, too many `OTP_ATTEMPTS_EXCEEDED`. See `completeMfa` to get the action's result.
 */
export async function satisfyMfa(
  client: Latchkey,
  parameters: SatisfyMfaParameters,
): Promise<SatisfyMfaReturnType> {
  const [{ fingerprint, totpCode, recoveryCode, contactCode, passkey }, options] = splitOptions(parameters)
  if (passkey) {
    await client.hydrate()
    const organizationId = options.organizationId ?? requireSession(client, options.sessionId).organizationId
    const stamper = webAuthnStamper({
      ...client.config.passkey,
      allowCredentialIds: passkey === true ? undefined : passkey.allowCredentialIds,
    })
    return submitActivity(
      client,
      'approve_activity',
      { fingerprint },
      { ...options, organizationId, stamper },
    )
  }
  if ([totpCode, recoveryCode, contactCode].filter((code) => code !== undefined).length !== 1)
    throw new LatchkeyError('Give exactly one of totpCode, recoveryCode, contactCode or passkey', {
      code: 'CONFIG_INVALID',
      details: { field: 'totpCode' },
    })
  return submitActivity(
    client,
    'latchkey_satisfy_mfa',
    totpCode !== undefined
      ? { fingerprint, totpCode: totpCode.trim() }
      : contactCode !== undefined
        ? { fingerprint, contactCode: contactCode.trim() }
        : { fingerprint, recoveryCode: recoveryCode! },
    options,
  )
}
