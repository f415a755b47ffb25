import type { UseMutationResult } from '@tanstack/react-query'
import type {
  CreateMfaPolicyParameters,
  CreateMfaPolicyReturnType,
} from '../../core/actions/activities/createMfaPolicy.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { createMfaPolicyMutationOptions } from '../../core/query/createMfaPolicy.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseCreateMfaPolicyParameters = ClientParameter &
  MutationParameter<CreateMfaPolicyReturnType, CreateMfaPolicyParameters>
export type UseCreateMfaPolicyReturnType = UseMutationResult<
  CreateMfaPolicyReturnType,
  LatchkeyError,
  CreateMfaPolicyParameters
>

/** Creates an MFA policy on a user (`create_mfa_policy`). */
export function useCreateMfaPolicy(
  parameters: UseCreateMfaPolicyParameters = {},
): UseCreateMfaPolicyReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<CreateMfaPolicyReturnType, CreateMfaPolicyParameters>(
    createMfaPolicyMutationOptions(client),
    parameters.mutation,
  )
}
