import type { UseMutationResult } from '@tanstack/react-query'
import type {
  DeleteSpendingLimitParameters,
  DeleteSpendingLimitReturnType,
} from '../../core/actions/activities/deleteSpendingLimit.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { deleteSpendingLimitMutationOptions } from '../../core/query/deleteSpendingLimit.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseDeleteSpendingLimitParameters = ClientParameter &
  MutationParameter<DeleteSpendingLimitReturnType, DeleteSpendingLimitParameters>
export type UseDeleteSpendingLimitReturnType = UseMutationResult<
  DeleteSpendingLimitReturnType,
  LatchkeyError,
  DeleteSpendingLimitParameters
>

/** Deletes a spending limit (`latchkey_delete_spending_limit`); what it counted is forgotten. */
export function useDeleteSpendingLimit(
  parameters: UseDeleteSpendingLimitParameters = {},
): UseDeleteSpendingLimitReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<DeleteSpendingLimitReturnType, DeleteSpendingLimitParameters>(
    deleteSpendingLimitMutationOptions(client),
    parameters.mutation,
  )
}
