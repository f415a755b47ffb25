import type { UseMutationResult } from '@tanstack/react-query'
import type { AddPasskeyParameters, AddPasskeyReturnType } from '../../core/actions/auth/addPasskey.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { addPasskeyMutationOptions } from '../../core/query/addPasskey.ts'
import {
  type ClientParameter,
  type MutationParameter,
  type OptionalVariables,
  useLatchkeyMutation,
} from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseAddPasskeyParameters = ClientParameter &
  MutationParameter<AddPasskeyReturnType, OptionalVariables<AddPasskeyParameters>>
export type UseAddPasskeyReturnType = UseMutationResult<
  AddPasskeyReturnType,
  LatchkeyError,
  OptionalVariables<AddPasskeyParameters>
>

/** Creates a passkey with the platform and adds it to the user. */
export function useAddPasskey(parameters: UseAddPasskeyParameters = {}): UseAddPasskeyReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<AddPasskeyReturnType, OptionalVariables<AddPasskeyParameters>>(
    addPasskeyMutationOptions(client) as never,
    parameters.mutation,
  )
}
