import type { UseMutationResult } from '@tanstack/react-query'
import type {
  UpdatePolicyParameters,
  UpdatePolicyReturnType,
} from '../../core/actions/activities/updatePolicy.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { updatePolicyMutationOptions } from '../../core/query/updatePolicy.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseUpdatePolicyParameters = ClientParameter &
  MutationParameter<UpdatePolicyReturnType, UpdatePolicyParameters>
export type UseUpdatePolicyReturnType = UseMutationResult<
  UpdatePolicyReturnType,
  LatchkeyError,
  UpdatePolicyParameters
>

/** Changes the given fields of a policy (`update_policy`). */
export function useUpdatePolicy(parameters: UseUpdatePolicyParameters = {}): UseUpdatePolicyReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<UpdatePolicyReturnType, UpdatePolicyParameters>(
    updatePolicyMutationOptions(client),
    parameters.mutation,
  )
}
