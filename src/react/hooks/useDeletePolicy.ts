import type { UseMutationResult } from '@tanstack/react-query'
import type {
  DeletePolicyParameters,
  DeletePolicyReturnType,
} from '../../core/actions/activities/deletePolicy.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { deletePolicyMutationOptions } from '../../core/query/deletePolicy.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseDeletePolicyParameters = ClientParameter &
  MutationParameter<DeletePolicyReturnType, DeletePolicyParameters>
export type UseDeletePolicyReturnType = UseMutationResult<
  DeletePolicyReturnType,
  LatchkeyError,
  DeletePolicyParameters
>

/** Deletes a policy (`delete_policy`). */
export function useDeletePolicy(parameters: UseDeletePolicyParameters = {}): UseDeletePolicyReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<DeletePolicyReturnType, DeletePolicyParameters>(
    deletePolicyMutationOptions(client),
    parameters.mutation,
  )
}
