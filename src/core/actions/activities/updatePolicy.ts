import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type UpdatePolicyParameters = ActivityParameters<'update_policy'> & ActionOptions
export type UpdatePolicyReturnType = ActivityResult<'update_policy'>

/** Changes the given fields of a policy (`update_policy`). */
export async function updatePolicy(
  client: Latchkey,
  parameters: UpdatePolicyParameters,
): Promise<UpdatePolicyReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(client, 'update_policy', activityParameters as ActivityParameters<'update_policy'>, options),
    ({ result }) => result,
  )
}
