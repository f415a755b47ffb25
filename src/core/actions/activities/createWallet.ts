import type { AccountSpec, ActivityResult, MnemonicLength } from '@latchkey/protocol'
import { accountSpecsOf, type Chain, DEFAULT_CHAINS } from '../../chains.ts'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

export type CreateWalletParameters = {
  walletName: string
  /** Explicit account specs. */
  accounts?: AccountSpec[] | undefined
  /** Conventional first accounts of these chains, added after `accounts`. @default ['ethereum', 'solana'] when `accounts` is absent */
  chains?: readonly Chain[] | undefined
  /** @default 12 */
  mnemonicLength?: MnemonicLength | undefined
} & ActionOptions
export type CreateWalletReturnType = ActivityResult<'create_wallet'>

/** Creates an HD wallet (`create_wallet`): `createWallet(client, { walletName, chains: ['ethereum', 'bitcoin'] })`. */
export async function createWallet(
  client: Latchkey,
  parameters: CreateWalletParameters,
): Promise<CreateWalletReturnType> {
  const [{ walletName, accounts, chains, mnemonicLength }, options] = splitOptions(parameters)
  const specs = [...(accounts ?? []), ...accountSpecsOf(chains ?? (accounts ? [] : DEFAULT_CHAINS))]
  return thenOrResume(
    submit(
      client,
      'create_wallet',
      { walletName, accounts: specs, ...(mnemonicLength ? { mnemonicLength } : {}) },
      options,
    ),
    ({ result }) => result,
  )
}
