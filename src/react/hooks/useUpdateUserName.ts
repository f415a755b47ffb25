import type { UseMutationResult } from '@tanstack/react-query'
import type {
  UpdateUserNameParameters,
  UpdateUserNameReturnType,
} from '../../core/actions/activities/updateUserName.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { updateUserNameMutationOptions } from '../../core/query/updateUserName.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseUpdateUserNameParameters = ClientParameter &
  MutationParameter<UpdateUserNameReturnType, UpdateUserNameParameters>
export type UseUpdateUserNameReturnType = UseMutationResult<
  UpdateUserNameReturnType,
  LatchkeyError,
  UpdateUserNameParameters
>

/** Renames a user. */
export function useUpdateUserName(parameters: UseUpdateUserNameParameters = {}): UseUpdateUserNameReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<UpdateUserNameReturnType, UpdateUserNameParameters>(
    updateUserNameMutationOptions(client),
    parameters.mutation,
  )
}
