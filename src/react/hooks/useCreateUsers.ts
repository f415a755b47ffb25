import type { UseMutationResult } from '@tanstack/react-query'
import type {
  CreateUsersParameters,
  CreateUsersReturnType,
} from '../../core/actions/activities/createUsers.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { createUsersMutationOptions } from '../../core/query/createUsers.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseCreateUsersParameters = ClientParameter &
  MutationParameter<CreateUsersReturnType, CreateUsersParameters>
export type UseCreateUsersReturnType = UseMutationResult<
  CreateUsersReturnType,
  LatchkeyError,
  CreateUsersParameters
>

/** Adds non-root users, e.g. an app back end with an API key (`create_users`). */
export function useCreateUsers(parameters: UseCreateUsersParameters = {}): UseCreateUsersReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<CreateUsersReturnType, CreateUsersParameters>(
    createUsersMutationOptions(client),
    parameters.mutation,
  )
}
