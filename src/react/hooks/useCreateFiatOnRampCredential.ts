import type { UseMutationResult } from '@tanstack/react-query'
import type {
  CreateFiatOnRampCredentialParameters,
  CreateFiatOnRampCredentialReturnType,
} from '../../core/actions/activities/createFiatOnRampCredential.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { createFiatOnRampCredentialMutationOptions } from '../../core/query/createFiatOnRampCredential.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseCreateFiatOnRampCredentialParameters = ClientParameter &
  MutationParameter<CreateFiatOnRampCredentialReturnType, CreateFiatOnRampCredentialParameters>
export type UseCreateFiatOnRampCredentialReturnType = UseMutationResult<
  CreateFiatOnRampCredentialReturnType,
  LatchkeyError,
  CreateFiatOnRampCredentialParameters
>

/** Stores a fiat on-ramp credential. */
export function useCreateFiatOnRampCredential(
  parameters: UseCreateFiatOnRampCredentialParameters = {},
): UseCreateFiatOnRampCredentialReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<CreateFiatOnRampCredentialReturnType, CreateFiatOnRampCredentialParameters>(
    createFiatOnRampCredentialMutationOptions(client),
    parameters.mutation,
  )
}
