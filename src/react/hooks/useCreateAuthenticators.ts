import type { UseMutationResult } from '@tanstack/react-query'
import type {
  CreateAuthenticatorsParameters,
  CreateAuthenticatorsReturnType,
} from '../../core/actions/activities/createAuthenticators.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { createAuthenticatorsMutationOptions } from '../../core/query/createAuthenticators.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseCreateAuthenticatorsParameters = ClientParameter &
  MutationParameter<CreateAuthenticatorsReturnType, CreateAuthenticatorsParameters>
export type UseCreateAuthenticatorsReturnType = UseMutationResult<
  CreateAuthenticatorsReturnType,
  LatchkeyError,
  CreateAuthenticatorsParameters
>

/** Adds passkeys from ready attestations. */
export function useCreateAuthenticators(
  parameters: UseCreateAuthenticatorsParameters = {},
): UseCreateAuthenticatorsReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<CreateAuthenticatorsReturnType, CreateAuthenticatorsParameters>(
    createAuthenticatorsMutationOptions(client),
    parameters.mutation,
  )
}
