import type { UseMutationResult } from '@tanstack/react-query'
import type {
  CreateApiKeysParameters,
  CreateApiKeysReturnType,
} from '../../core/actions/activities/createApiKeys.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { createApiKeysMutationOptions } from '../../core/query/createApiKeys.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseCreateApiKeysParameters = ClientParameter &
  MutationParameter<CreateApiKeysReturnType, CreateApiKeysParameters>
export type UseCreateApiKeysReturnType = UseMutationResult<
  CreateApiKeysReturnType,
  LatchkeyError,
  CreateApiKeysParameters
>

/** Adds API keys to a user. */
export function useCreateApiKeys(parameters: UseCreateApiKeysParameters = {}): UseCreateApiKeysReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<CreateApiKeysReturnType, CreateApiKeysParameters>(
    createApiKeysMutationOptions(client),
    parameters.mutation,
  )
}
