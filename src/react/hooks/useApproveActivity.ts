import type { UseMutationResult } from '@tanstack/react-query'
import type {
  ApproveActivityParameters,
  ApproveActivityReturnType,
} from '../../core/actions/activities/approveActivity.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { approveActivityMutationOptions } from '../../core/query/approveActivity.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseApproveActivityParameters = ClientParameter &
  MutationParameter<ApproveActivityReturnType, ApproveActivityParameters>
export type UseApproveActivityReturnType = UseMutationResult<
  ApproveActivityReturnType,
  LatchkeyError,
  ApproveActivityParameters
>

/**
 * Approves an activity waiting for consensus (by `fingerprint`). When the voter's own MFA policies
 * would hold that activity, the vote waits for their second factor: the mutation fails with
 * `MfaRequiredError` (finish it with `useCompleteMfa`; `<ActivityApproval/>` asks for the factor itself).
 */
export function useApproveActivity(
  parameters: UseApproveActivityParameters = {},
): UseApproveActivityReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<ApproveActivityReturnType, ApproveActivityParameters>(
    approveActivityMutationOptions(client),
    parameters.mutation,
  )
}
