import type { UseMutationResult } from '@tanstack/react-query'
import type {
  CreatePolicyParameters,
  CreatePolicyReturnType,
} from '../../core/actions/activities/createPolicy.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { createPolicyMutationOptions } from '../../core/query/createPolicy.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseCreatePolicyParameters = ClientParameter &
  MutationParameter<CreatePolicyReturnType, CreatePolicyParameters>
export type UseCreatePolicyReturnType = UseMutationResult<
  CreatePolicyReturnType,
  LatchkeyError,
  CreatePolicyParameters
>

/** Creates a policy (`create_policy`): an ALLOW or DENY with a condition and a consensus. */
export function useCreatePolicy(parameters: UseCreatePolicyParameters = {}): UseCreatePolicyReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<CreatePolicyReturnType, CreatePolicyParameters>(
    createPolicyMutationOptions(client),
    parameters.mutation,
  )
}
