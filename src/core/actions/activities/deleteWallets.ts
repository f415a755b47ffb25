import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type DeleteWalletsParameters = ActivityParameters<'delete_wallets'> & ActionOptions
export type DeleteWalletsReturnType = ActivityResult<'delete_wallets'>

/** Deletes wallets (`delete_wallets`); never-exported ones need `deleteWithoutExport`. */
export async function deleteWallets(
  client: Latchkey,
  parameters: DeleteWalletsParameters,
): Promise<DeleteWalletsReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(client, 'delete_wallets', activityParameters as ActivityParameters<'delete_wallets'>, options),
    ({ result }) => result,
  )
}
