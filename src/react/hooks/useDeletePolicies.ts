import type { UseMutationResult } from '@tanstack/react-query'
import type {
  DeletePoliciesParameters,
  DeletePoliciesReturnType,
} from '../../core/actions/activities/deletePolicies.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { deletePoliciesMutationOptions } from '../../core/query/deletePolicies.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseDeletePoliciesParameters = ClientParameter &
  MutationParameter<DeletePoliciesReturnType, DeletePoliciesParameters>
export type UseDeletePoliciesReturnType = UseMutationResult<
  DeletePoliciesReturnType,
  LatchkeyError,
  DeletePoliciesParameters
>

/** Deletes several policies (`delete_policies`). */
export function useDeletePolicies(parameters: UseDeletePoliciesParameters = {}): UseDeletePoliciesReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<DeletePoliciesReturnType, DeletePoliciesParameters>(
    deletePoliciesMutationOptions(client),
    parameters.mutation,
  )
}
