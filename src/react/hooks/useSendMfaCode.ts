import type { UseMutationResult } from '@tanstack/react-query'
import type {
  SendMfaCodeParameters,
  SendMfaCodeReturnType,
} from '../../core/actions/activities/sendMfaCode.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { sendMfaCodeMutationOptions } from '../../core/query/sendMfaCode.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseSendMfaCodeParameters = ClientParameter &
  MutationParameter<SendMfaCodeReturnType, SendMfaCodeParameters>
export type UseSendMfaCodeReturnType = UseMutationResult<
  SendMfaCodeReturnType,
  LatchkeyError,
  SendMfaCodeParameters
>

/**
 * Sends a one-time code to the user's verified e-mail or phone for the step an action waits for
 * (`MfaRequiredError` as `challenge`); `data.sentTo` is the masked contact.
 */
export function useSendMfaCode(parameters: UseSendMfaCodeParameters = {}): UseSendMfaCodeReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<SendMfaCodeReturnType, SendMfaCodeParameters>(
    sendMfaCodeMutationOptions(client),
    parameters.mutation,
  )
}
