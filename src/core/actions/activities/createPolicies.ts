import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type CreatePoliciesParameters = ActivityParameters<'create_policies'> & ActionOptions
export type CreatePoliciesReturnType = ActivityResult<'create_policies'>

/** Creates several policies at once (`create_policies`). */
export async function createPolicies(
  client: Latchkey,
  parameters: CreatePoliciesParameters,
): Promise<CreatePoliciesReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(client, 'create_policies', activityParameters as ActivityParameters<'create_policies'>, options),
    ({ result }) => result,
  )
}
