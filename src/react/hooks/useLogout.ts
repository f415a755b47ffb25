import type { UseMutationResult } from '@tanstack/react-query'
import type { LogoutParameters, LogoutReturnType } from '../../core/actions/auth/logout.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { logoutMutationOptions } from '../../core/query/logout.ts'
import {
  type ClientParameter,
  type MutationParameter,
  type OptionalVariables,
  useLatchkeyMutation,
} from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseLogoutParameters = ClientParameter &
  MutationParameter<LogoutReturnType, OptionalVariables<LogoutParameters>>
export type UseLogoutReturnType = UseMutationResult<
  LogoutReturnType,
  LatchkeyError,
  OptionalVariables<LogoutParameters>
>

/** Signs a session out (revokes its key on the service): `mutate()` or `mutate({ sessionId })`. */
export function useLogout(parameters: UseLogoutParameters = {}): UseLogoutReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<LogoutReturnType, OptionalVariables<LogoutParameters>>(
    logoutMutationOptions(client) as never,
    parameters.mutation,
  )
}
