import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type DeletePoliciesParameters = ActivityParameters<'delete_policies'> & ActionOptions
export type DeletePoliciesReturnType = ActivityResult<'delete_policies'>

/** Deletes several policies (`delete_policies`). */
export async function deletePolicies(
  client: Latchkey,
  parameters: DeletePoliciesParameters,
): Promise<DeletePoliciesReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(client, 'delete_policies', activityParameters as ActivityParameters<'delete_policies'>, options),
    ({ result }) => result,
  )
}
