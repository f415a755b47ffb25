import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type DeleteSpendingLimitParameters = ActivityParameters<'latchkey_delete_spending_limit'> &
  ActionOptions
export type DeleteSpendingLimitReturnType = ActivityResult<'latchkey_delete_spending_limit'>

/** Deletes a spending limit (`latchkey_delete_spending_limit`); what it counted is forgotten. */
export async function deleteSpendingLimit(
  client: Latchkey,
  parameters: DeleteSpendingLimitParameters,
): Promise<DeleteSpendingLimitReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return (
    await submit(
      client,
      'latchkey_delete_spending_limit',
      activityParameters as ActivityParameters<'latchkey_delete_spending_limit'>,
      options,
    )
  ).result
}
