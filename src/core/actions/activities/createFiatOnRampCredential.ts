import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type CreateFiatOnRampCredentialParameters = ActivityParameters<'create_fiat_on_ramp_credential'> &
  ActionOptions
export type CreateFiatOnRampCredentialReturnType = ActivityResult<'create_fiat_on_ramp_credential'>

/** Stores a fiat on-ramp credential (`create_fiat_on_ramp_credential`). */
export async function createFiatOnRampCredential(
  client: Latchkey,
  parameters: CreateFiatOnRampCredentialParameters,
): Promise<CreateFiatOnRampCredentialReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(
      client,
      'create_fiat_on_ramp_credential',
      activityParameters as ActivityParameters<'create_fiat_on_ramp_credential'>,
      options,
    ),
    ({ result }) => result,
  )
}
