import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type CreatePolicyParameters = ActivityParameters<'create_policy'> & ActionOptions
export type CreatePolicyReturnType = ActivityResult<'create_policy'>

/** Creates a policy (`create_policy`): an ALLOW or DENY with a condition and a consensus. */
export async function createPolicy(
  client: Latchkey,
  parameters: CreatePolicyParameters,
): Promise<CreatePolicyReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(client, 'create_policy', activityParameters as ActivityParameters<'create_policy'>, options),
    ({ result }) => result,
  )
}
