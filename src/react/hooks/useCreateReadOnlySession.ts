import type { UseMutationResult } from '@tanstack/react-query'
import type {
  CreateReadOnlySessionParameters,
  CreateReadOnlySessionReturnType,
} from '../../core/actions/activities/createReadOnlySession.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { createReadOnlySessionMutationOptions } from '../../core/query/createReadOnlySession.ts'
import {
  type ClientParameter,
  type MutationParameter,
  type OptionalVariables,
  useLatchkeyMutation,
} from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseCreateReadOnlySessionParameters = ClientParameter &
  MutationParameter<CreateReadOnlySessionReturnType, OptionalVariables<CreateReadOnlySessionParameters>>
export type UseCreateReadOnlySessionReturnType = UseMutationResult<
  CreateReadOnlySessionReturnType,
  LatchkeyError,
  OptionalVariables<CreateReadOnlySessionParameters>
>

/** Creates a one-hour read-only session (kept in memory). */
export function useCreateReadOnlySession(
  parameters: UseCreateReadOnlySessionParameters = {},
): UseCreateReadOnlySessionReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<
    CreateReadOnlySessionReturnType,
    OptionalVariables<CreateReadOnlySessionParameters>
  >(createReadOnlySessionMutationOptions(client) as never, parameters.mutation)
}
