import type { UseMutationResult } from '@tanstack/react-query'
import type {
  DeleteAuthenticatorsParameters,
  DeleteAuthenticatorsReturnType,
} from '../../core/actions/activities/deleteAuthenticators.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { deleteAuthenticatorsMutationOptions } from '../../core/query/deleteAuthenticators.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseRemovePasskeyParameters = ClientParameter &
  MutationParameter<DeleteAuthenticatorsReturnType, DeleteAuthenticatorsParameters>
export type UseRemovePasskeyReturnType = UseMutationResult<
  DeleteAuthenticatorsReturnType,
  LatchkeyError,
  DeleteAuthenticatorsParameters
>

/** Removes passkeys from a user (`delete_authenticators`). */
export function useRemovePasskey(parameters: UseRemovePasskeyParameters = {}): UseRemovePasskeyReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<DeleteAuthenticatorsReturnType, DeleteAuthenticatorsParameters>(
    deleteAuthenticatorsMutationOptions(client),
    parameters.mutation,
  )
}
