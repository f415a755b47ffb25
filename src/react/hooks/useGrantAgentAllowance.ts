import type { UseMutationResult } from '@tanstack/react-query'
import type {
  GrantAgentAllowanceParameters,
  GrantAgentAllowanceReturnType,
} from '../../core/actions/activities/grantAgentAllowance.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { grantAgentAllowanceMutationOptions } from '../../core/query/grantAgentAllowance.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseGrantAgentAllowanceParameters = ClientParameter &
  MutationParameter<GrantAgentAllowanceReturnType, GrantAgentAllowanceParameters>
export type UseGrantAgentAllowanceReturnType = UseMutationResult<
  GrantAgentAllowanceReturnType,
  LatchkeyError,
  GrantAgentAllowanceParameters
>

/** Gives an agent an allowance: its own key, a spending limit on it and a policy to sign (`grantAgentAllowance`). */
export function useGrantAgentAllowance(
  parameters: UseGrantAgentAllowanceParameters = {},
): UseGrantAgentAllowanceReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<GrantAgentAllowanceReturnType, GrantAgentAllowanceParameters>(
    grantAgentAllowanceMutationOptions(client),
    parameters.mutation,
  )
}
