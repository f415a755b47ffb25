// The accounts of a wallet an activity acts on as a whole, as the policies judge them. Exporting a
// wallet exports the mnemonic every one of its accounts' keys derives from, and deleting it deletes
// them: each is judged as `wallet_account` in a scope of its own, as exporting or signing with it
// is, so a DENY on `wallet_account.address` holds for the whole wallet as for the account.
import { PermissionError } from '../kernel/base/errors.ts'
import type { WalletAccountRow } from '../kernel/store/model.ts'
import type { Reads, Store } from '../kernel/store/Store.ts'
import { canonicalAddress } from './canonicalAddress.ts'

/**
 * The most accounts (distinct wallet and address) of the wallets one activity acts on as a whole
 * that it is judged by, each a scope of its own: 1,000, ten `create_wallet` calls of the most
 * accounts one derives, fewer scopes than a signing may have (100 payloads times `MAX_HOLDERS`).
 * Wallets holding more are refused rather than judged by some of their accounts.
 */
export const MAX_WALLET_ACCOUNTS = 1_000

/** What the lookups read with: a page where `reads` can (the store, a transaction), else every row. */
type AccountReads = Reads & Partial<Pick<Store, 'pageBy'>>

/** At most `limit` accounts of `walletId`, in creation order, through the wallet index. */
function accountsIn(reads: AccountReads, walletId: string, limit: number): Promise<WalletAccountRow[]> {
  if (typeof reads.pageBy === 'function')
    return reads.pageBy('walletAccounts', { field: 'walletId', value: walletId, by: 'id', limit })
  return reads.findBy('walletAccounts', 'walletId', walletId)
}

/**
 * The accounts of each of `walletIds` (by wallet id, each address canonical and once), read through
 * the wallet index: one lookup and one page a wallet, whatever the size of the wallets. A wallet
 * that is not the organization's has none (its handler refuses it; nothing of it is read). Throws
 * a 403 naming `field` when they hold more than `MAX_WALLET_ACCOUNTS` in all.
 */
export async function walletAccountsOf(
  reads: Reads,
  organizationId: string,
  walletIds: readonly string[],
  field: string,
): Promise<Map<string, string[]>> {
  const accounts = new Map<string, string[]>()
  let judged = 0
  for (const walletId of walletIds) {
    const wallet = await reads.get('wallets', walletId)
    if (!wallet || wallet.organizationId !== organizationId) continue
    const left = MAX_WALLET_ACCOUNTS - judged
    const rows = (await accountsIn(reads, walletId, left + 1)).filter(
      (row) => row.organizationId === organizationId && row.walletId === walletId,
    )
    // A full page: there may be more than it read.
    if (rows.length > left)
      throw new PermissionError({
        field,
        message:
          walletIds.length === 1
            ? `wallet ${walletId} holds more than ${MAX_WALLET_ACCOUNTS} accounts: the activity acts on every one of them and is refused rather than judged by some of them`
            : `the wallets named hold more than ${MAX_WALLET_ACCOUNTS} accounts in all: the activity acts on every one of them and is refused rather than judged by some of them; name fewer wallets at a time`,
        extra: { maxWalletAccounts: MAX_WALLET_ACCOUNTS },
      })
    const addresses = [...new Set(rows.map((row) => canonicalAddress(row.address)))]
    accounts.set(walletId, addresses)
    judged += addresses.length
  }
  return accounts
}
