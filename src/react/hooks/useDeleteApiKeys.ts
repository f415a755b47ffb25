import type { UseMutationResult } from '@tanstack/react-query'
import type {
  DeleteApiKeysParameters,
  DeleteApiKeysReturnType,
} from '../../core/actions/activities/deleteApiKeys.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { deleteApiKeysMutationOptions } from '../../core/query/deleteApiKeys.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseDeleteApiKeysParameters = ClientParameter &
  MutationParameter<DeleteApiKeysReturnType, DeleteApiKeysParameters>
export type UseDeleteApiKeysReturnType = UseMutationResult<
  DeleteApiKeysReturnType,
  LatchkeyError,
  DeleteApiKeysParameters
>

/** Deletes API keys of a user. */
export function useDeleteApiKeys(parameters: UseDeleteApiKeysParameters = {}): UseDeleteApiKeysReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<DeleteApiKeysReturnType, DeleteApiKeysParameters>(
    deleteApiKeysMutationOptions(client),
    parameters.mutation,
  )
}
