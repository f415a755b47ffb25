import type { UseMutationResult } from '@tanstack/react-query'
import type {
  UpdateSpendingLimitParameters,
  UpdateSpendingLimitReturnType,
} from '../../core/actions/activities/updateSpendingLimit.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { updateSpendingLimitMutationOptions } from '../../core/query/updateSpendingLimit.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseUpdateSpendingLimitParameters = ClientParameter &
  MutationParameter<UpdateSpendingLimitReturnType, UpdateSpendingLimitParameters>
export type UseUpdateSpendingLimitReturnType = UseMutationResult<
  UpdateSpendingLimitReturnType,
  LatchkeyError,
  UpdateSpendingLimitParameters
>

/** Changes a spending limit's amount, name or allowed destinations (`latchkey_update_spending_limit`). */
export function useUpdateSpendingLimit(
  parameters: UseUpdateSpendingLimitParameters = {},
): UseUpdateSpendingLimitReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<UpdateSpendingLimitReturnType, UpdateSpendingLimitParameters>(
    updateSpendingLimitMutationOptions(client),
    parameters.mutation,
  )
}
