import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type SignRawPayloadsParameters = ActivityParameters<'sign_raw_payloads'> & ActionOptions
export type SignRawPayloadsReturnType = ActivityResult<'sign_raw_payloads'>

/** Signs payloads with a wallet account or private key (`sign_raw_payloads`). */
export async function signRawPayloads(
  client: Latchkey,
  parameters: SignRawPayloadsParameters,
): Promise<SignRawPayloadsReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(
      client,
      'sign_raw_payloads',
      activityParameters as ActivityParameters<'sign_raw_payloads'>,
      options,
    ),
    ({ result }) => result,
  )
}
