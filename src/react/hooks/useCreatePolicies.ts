import type { UseMutationResult } from '@tanstack/react-query'
import type {
  CreatePoliciesParameters,
  CreatePoliciesReturnType,
} from '../../core/actions/activities/createPolicies.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { createPoliciesMutationOptions } from '../../core/query/createPolicies.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseCreatePoliciesParameters = ClientParameter &
  MutationParameter<CreatePoliciesReturnType, CreatePoliciesParameters>
export type UseCreatePoliciesReturnType = UseMutationResult<
  CreatePoliciesReturnType,
  LatchkeyError,
  CreatePoliciesParameters
>

/** Creates several policies at once (`create_policies`). */
export function useCreatePolicies(parameters: UseCreatePoliciesParameters = {}): UseCreatePoliciesReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<CreatePoliciesReturnType, CreatePoliciesParameters>(
    createPoliciesMutationOptions(client),
    parameters.mutation,
  )
}
