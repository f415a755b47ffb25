import type { MfaRequiredError } from '../../errors.ts'
import { mfaRequiredError } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import type { ActionOptions } from '../options.ts'
import { type MfaProof, satisfyMfa } from './satisfyMfa.ts'

export type CompleteMfaParameters<T> = {
  /** The `MfaRequiredError` the action threw. */
  challenge: MfaRequiredError<T>
} & MfaProof &
  ActionOptions

/**
 * Satisfies the step an action is waiting for and answers what the action would have (the
 * export's mnemonic, the signature, the send's id): the activity runs once, on the service, when
 * its last step is proven. If another step remains, throws a new `MfaRequiredError` for it.
 */
export async function completeMfa<T>(client: Latchkey, parameters: CompleteMfaParameters<T>): Promise<T> {
  const { challenge, ...rest } = parameters
  const organizationId = rest.organizationId ?? challenge.activity.organizationId
  const activity = await satisfyMfa(client, { ...rest, organizationId, fingerprint: challenge.fingerprint })
  if (activity.status === 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    throw await mfaRequiredError(client, {
      activity,
      resume: challenge.resume,
      options: { sessionId: rest.sessionId, signal: rest.signal },
    })
  return challenge.resume(activity)
}
