import type { AccountSpec, ActivityResult } from '@latchkey/protocol'
import { accountSpecOf, type Chain } from '../../chains.ts'
import { thenOrResume } from '../../errors.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'
import { getWalletAccounts } from '../queries/getWalletAccounts.ts'

export type CreateWalletAccountsParameters = {
  walletId: string
  accounts?: AccountSpec[] | undefined
  /** Next conventional account of each chain (index = how many the wallet already has of it). */
  chains?: readonly Chain[] | undefined
  /** @default true */
  persist?: boolean | undefined
} & ActionOptions
export type CreateWalletAccountsReturnType = ActivityResult<'create_wallet_accounts'>

/** Derives more accounts of a wallet (`create_wallet_accounts`). */
export async function createWalletAccounts(
  client: Latchkey,
  parameters: CreateWalletAccountsParameters,
): Promise<CreateWalletAccountsReturnType> {
  const [{ walletId, accounts, chains, persist }, options] = splitOptions(parameters)
  const specs = [...(accounts ?? [])]
  if (chains?.length) {
    const existing = (
      await getWalletAccounts(client, { walletId, paginationOptions: { limit: '100' }, ...options })
    ).accounts
    for (const chain of chains) {
      const { addressFormat } = accountSpecOf(chain)
      const taken = existing.filter((a) => a.addressFormat === addressFormat).length
      specs.push(accountSpecOf(chain, taken + specs.filter((s) => s.addressFormat === addressFormat).length))
    }
  }
  return thenOrResume(
    submit(
      client,
      'create_wallet_accounts',
      { walletId, accounts: specs, ...(persist === undefined ? {} : { persist }) },
      options,
    ),
    ({ result }) => result,
  )
}
