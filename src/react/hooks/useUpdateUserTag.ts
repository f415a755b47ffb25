import type { UseMutationResult } from '@tanstack/react-query'
import type {
  UpdateUserTagParameters,
  UpdateUserTagReturnType,
} from '../../core/actions/activities/updateUserTag.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { updateUserTagMutationOptions } from '../../core/query/updateUserTag.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseUpdateUserTagParameters = ClientParameter &
  MutationParameter<UpdateUserTagReturnType, UpdateUserTagParameters>
export type UseUpdateUserTagReturnType = UseMutationResult<
  UpdateUserTagReturnType,
  LatchkeyError,
  UpdateUserTagParameters
>

/** Updates a user tag. */
export function useUpdateUserTag(parameters: UseUpdateUserTagParameters = {}): UseUpdateUserTagReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<UpdateUserTagReturnType, UpdateUserTagParameters>(
    updateUserTagMutationOptions(client),
    parameters.mutation,
  )
}
