import type { UseMutationResult } from '@tanstack/react-query'
import type {
  RevokeAgentAllowanceParameters,
  RevokeAgentAllowanceReturnType,
} from '../../core/actions/activities/revokeAgentAllowance.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { revokeAgentAllowanceMutationOptions } from '../../core/query/revokeAgentAllowance.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseRevokeAgentAllowanceParameters = ClientParameter &
  MutationParameter<RevokeAgentAllowanceReturnType, RevokeAgentAllowanceParameters>
export type UseRevokeAgentAllowanceReturnType = UseMutationResult<
  RevokeAgentAllowanceReturnType,
  LatchkeyError,
  RevokeAgentAllowanceParameters
>

/** Takes an agent's allowance back: its user and key, its policy and its limit (`revokeAgentAllowance`). */
export function useRevokeAgentAllowance(
  parameters: UseRevokeAgentAllowanceParameters = {},
): UseRevokeAgentAllowanceReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<RevokeAgentAllowanceReturnType, RevokeAgentAllowanceParameters>(
    revokeAgentAllowanceMutationOptions(client),
    parameters.mutation,
  )
}
