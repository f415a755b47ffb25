import type { UseMutationResult } from '@tanstack/react-query'
import type {
  UpdateMfaPolicyParameters,
  UpdateMfaPolicyReturnType,
} from '../../core/actions/activities/updateMfaPolicy.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { updateMfaPolicyMutationOptions } from '../../core/query/updateMfaPolicy.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseUpdateMfaPolicyParameters = ClientParameter &
  MutationParameter<UpdateMfaPolicyReturnType, UpdateMfaPolicyParameters>
export type UseUpdateMfaPolicyReturnType = UseMutationResult<
  UpdateMfaPolicyReturnType,
  LatchkeyError,
  UpdateMfaPolicyParameters
>

/** Changes an MFA policy (`update_mfa_policy`). */
export function useUpdateMfaPolicy(
  parameters: UseUpdateMfaPolicyParameters = {},
): UseUpdateMfaPolicyReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<UpdateMfaPolicyReturnType, UpdateMfaPolicyParameters>(
    updateMfaPolicyMutationOptions(client),
    parameters.mutation,
  )
}
