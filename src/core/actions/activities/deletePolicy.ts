import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type DeletePolicyParameters = ActivityParameters<'delete_policy'> & ActionOptions
export type DeletePolicyReturnType = ActivityResult<'delete_policy'>

/** Deletes a policy (`delete_policy`). */
export async function deletePolicy(
  client: Latchkey,
  parameters: DeletePolicyParameters,
): Promise<DeletePolicyReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(client, 'delete_policy', activityParameters as ActivityParameters<'delete_policy'>, options),
    ({ result }) => result,
  )
}
