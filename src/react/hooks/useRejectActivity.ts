import type { UseMutationResult } from '@tanstack/react-query'
import type {
  RejectActivityParameters,
  RejectActivityReturnType,
} from '../../core/actions/activities/rejectActivity.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { rejectActivityMutationOptions } from '../../core/query/rejectActivity.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseRejectActivityParameters = ClientParameter &
  MutationParameter<RejectActivityReturnType, RejectActivityParameters>
export type UseRejectActivityReturnType = UseMutationResult<
  RejectActivityReturnType,
  LatchkeyError,
  RejectActivityParameters
>

/** Rejects an activity waiting for consensus (by `fingerprint`). */
export function useRejectActivity(parameters: UseRejectActivityParameters = {}): UseRejectActivityReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<RejectActivityReturnType, RejectActivityParameters>(
    rejectActivityMutationOptions(client),
    parameters.mutation,
  )
}
