import type { UseMutationResult } from '@tanstack/react-query'
import type {
  CreateUserTagParameters,
  CreateUserTagReturnType,
} from '../../core/actions/activities/createUserTag.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { createUserTagMutationOptions } from '../../core/query/createUserTag.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseCreateUserTagParameters = ClientParameter &
  MutationParameter<CreateUserTagReturnType, CreateUserTagParameters>
export type UseCreateUserTagReturnType = UseMutationResult<
  CreateUserTagReturnType,
  LatchkeyError,
  CreateUserTagParameters
>

/** Creates a user tag. */
export function useCreateUserTag(parameters: UseCreateUserTagParameters = {}): UseCreateUserTagReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<CreateUserTagReturnType, CreateUserTagParameters>(
    createUserTagMutationOptions(client),
    parameters.mutation,
  )
}
