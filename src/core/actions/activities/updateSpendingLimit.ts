import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type UpdateSpendingLimitParameters = ActivityParameters<'latchkey_update_spending_limit'> &
  ActionOptions
export type UpdateSpendingLimitReturnType = ActivityResult<'latchkey_update_spending_limit'>

/** Changes a spending limit's amount, name or allowed destinations (`latchkey_update_spending_limit`). */
export async function updateSpendingLimit(
  client: Latchkey,
  parameters: UpdateSpendingLimitParameters,
): Promise<UpdateSpendingLimitReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return (
    await submit(
      client,
      'latchkey_update_spending_limit',
      activityParameters as ActivityParameters<'latchkey_update_spending_limit'>,
      options,
    )
  ).result
}
