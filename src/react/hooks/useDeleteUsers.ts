import type { UseMutationResult } from '@tanstack/react-query'
import type {
  DeleteUsersParameters,
  DeleteUsersReturnType,
} from '../../core/actions/activities/deleteUsers.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { deleteUsersMutationOptions } from '../../core/query/deleteUsers.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseDeleteUsersParameters = ClientParameter &
  MutationParameter<DeleteUsersReturnType, DeleteUsersParameters>
export type UseDeleteUsersReturnType = UseMutationResult<
  DeleteUsersReturnType,
  LatchkeyError,
  DeleteUsersParameters
>

/** Deletes non-root users with their credentials (`delete_users`). */
export function useDeleteUsers(parameters: UseDeleteUsersParameters = {}): UseDeleteUsersReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<DeleteUsersReturnType, DeleteUsersParameters>(
    deleteUsersMutationOptions(client),
    parameters.mutation,
  )
}
