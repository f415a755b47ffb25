import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type ExportWalletAccountBundleParameters = ActivityParameters<'export_wallet_account'> & ActionOptions
export type ExportWalletAccountBundleReturnType = ActivityResult<'export_wallet_account'>

/** `export_wallet_account`: the account key encrypted to `targetPublicKey` (see `exportWalletAccount` to decrypt). */
export async function exportWalletAccountBundle(
  client: Latchkey,
  parameters: ExportWalletAccountBundleParameters,
): Promise<ExportWalletAccountBundleReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(
      client,
      'export_wallet_account',
      activityParameters as ActivityParameters<'export_wallet_account'>,
      options,
    ),
    ({ result }) => result,
  )
}
