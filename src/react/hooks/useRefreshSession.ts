import type { UseMutationResult } from '@tanstack/react-query'
import type {
  RefreshSessionParameters,
  RefreshSessionReturnType,
} from '../../core/actions/auth/refreshSession.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { refreshSessionMutationOptions } from '../../core/query/refreshSession.ts'
import {
  type ClientParameter,
  type MutationParameter,
  type OptionalVariables,
  useLatchkeyMutation,
} from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseRefreshSessionParameters = ClientParameter &
  MutationParameter<RefreshSessionReturnType, OptionalVariables<RefreshSessionParameters>>
export type UseRefreshSessionReturnType = UseMutationResult<
  RefreshSessionReturnType,
  LatchkeyError,
  OptionalVariables<RefreshSessionParameters>
>

/** Extends a session now (new key via `stamp_login`). */
export function useRefreshSession(parameters: UseRefreshSessionParameters = {}): UseRefreshSessionReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<RefreshSessionReturnType, OptionalVariables<RefreshSessionParameters>>(
    refreshSessionMutationOptions(client) as never,
    parameters.mutation,
  )
}
