import type { ActivityParameters, ActivityResult } from '@latchkey/protocol'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type InitImportWalletParameters = ActivityParameters<'init_import_wallet'> & ActionOptions
export type InitImportWalletReturnType = ActivityResult<'init_import_wallet'>

/** `init_import_wallet`: the signed bundle naming the key to encrypt an import to. */
export async function initImportWallet(
  client: Latchkey,
  parameters: InitImportWalletParameters,
): Promise<InitImportWalletReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return thenOrResume(
    submit(
      client,
      'init_import_wallet',
      activityParameters as ActivityParameters<'init_import_wallet'>,
      options,
    ),
    ({ result }) => result,
  )
}
