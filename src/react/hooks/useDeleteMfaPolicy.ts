import type { UseMutationResult } from '@tanstack/react-query'
import type {
  DeleteMfaPolicyParameters,
  DeleteMfaPolicyReturnType,
} from '../../core/actions/activities/deleteMfaPolicy.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { deleteMfaPolicyMutationOptions } from '../../core/query/deleteMfaPolicy.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseDeleteMfaPolicyParameters = ClientParameter &
  MutationParameter<DeleteMfaPolicyReturnType, DeleteMfaPolicyParameters>
export type UseDeleteMfaPolicyReturnType = UseMutationResult<
  DeleteMfaPolicyReturnType,
  LatchkeyError,
  DeleteMfaPolicyParameters
>

/** Removes an MFA policy (`delete_mfa_policy`). */
export function useDeleteMfaPolicy(
  parameters: UseDeleteMfaPolicyParameters = {},
): UseDeleteMfaPolicyReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<DeleteMfaPolicyReturnType, DeleteMfaPolicyParameters>(
    deleteMfaPolicyMutationOptions(client),
    parameters.mutation,
  )
}
