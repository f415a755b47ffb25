import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type CreateSpendingLimitParameters = ActivityParameters<'latchkey_create_spending_limit'> &
  ActionOptions
export type CreateSpendingLimitReturnType = ActivityResult<'latchkey_create_spending_limit'>

/** Creates a spending limit (`latchkey_create_spending_limit`): a cap per window on what an account, a user or an API key signs. */
export async function createSpendingLimit(
  client: Latchkey,
  parameters: CreateSpendingLimitParameters,
): Promise<CreateSpendingLimitReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return (
    await submit(
      client,
      'latchkey_create_spending_limit',
      activityParameters as ActivityParameters<'latchkey_create_spending_limit'>,
      options,
    )
  ).result
}
