import type { UseMutationResult } from '@tanstack/react-query'
import type {
  CreateSpendingLimitParameters,
  CreateSpendingLimitReturnType,
} from '../../core/actions/activities/createSpendingLimit.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { createSpendingLimitMutationOptions } from '../../core/query/createSpendingLimit.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseCreateSpendingLimitParameters = ClientParameter &
  MutationParameter<CreateSpendingLimitReturnType, CreateSpendingLimitParameters>
export type UseCreateSpendingLimitReturnType = UseMutationResult<
  CreateSpendingLimitReturnType,
  LatchkeyError,
  CreateSpendingLimitParameters
>

/** Creates a spending limit (`latchkey_create_spending_limit`): a cap per window on what an account, a user or an API key signs. */
export function useCreateSpendingLimit(
  parameters: UseCreateSpendingLimitParameters = {},
): UseCreateSpendingLimitReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<CreateSpendingLimitReturnType, CreateSpendingLimitParameters>(
    createSpendingLimitMutationOptions(client),
    parameters.mutation,
  )
}
