import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type ImportWalletBundleParameters = ActivityParameters<'import_wallet'> & ActionOptions
export type ImportWalletBundleReturnType = ActivityResult<'import_wallet'>

/** `import_wallet` with an already encrypted bundle (see `importWallet` to encrypt a mnemonic). */
export async function importWalletBundle(
  client: Latchkey,
  parameters: ImportWalletBundleParameters,
): Promise<ImportWalletBundleReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(client, 'import_wallet', activityParameters as ActivityParameters<'import_wallet'>, options),
    ({ result }) => result,
  )
}
