import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type ExportWalletBundleParameters = ActivityParameters<'export_wallet'> & ActionOptions
export type ExportWalletBundleReturnType = ActivityResult<'export_wallet'>

/** `export_wallet`: the mnemonic encrypted to `targetPublicKey` (see `exportWallet` to decrypt). */
export async function exportWalletBundle(
  client: Latchkey,
  parameters: ExportWalletBundleParameters,
): Promise<ExportWalletBundleReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(client, 'export_wallet', activityParameters as ActivityParameters<'export_wallet'>, options),
    ({ result }) => result,
  )
}
