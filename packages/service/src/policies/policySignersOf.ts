// Who signs, as the policies see it: the key the handler signs or exports with, not the address
// string its parameter named. `findSigner` takes a wallet account by any of its addresses and a
// private key by its id or any of its addresses, and one key can be held under several names: a
// wallet keeps it under several address formats (`create_wallet_accounts` adds a `curve|path`
// again in another `addressFormat`), the same mnemonic imported twice holds it in two wallets, a
// private key imported from the same secret holds it with no wallet. Every one of them signs the
// same transactions, which the chain sees from the key's 0x address. So a DENY on
// `wallet_account.address`, `wallet` or `eth.tx.from` must hold whichever of them the caller
// names (the limits read the key the same way: limits/signerKey.ts).
import { hexToBytes } from '@noble/hashes/utils.js'
import { findSigner } from '../domain/wallets.ts'
import { mapInOrder } from '../kernel/base/async.ts'
import { NotFoundError, PermissionError } from '../kernel/base/errors.ts'
import { addressFromPublicKey } from '../kernel/crypto/addresses.ts'
import type { WalletAccountRow } from '../kernel/store/model.ts'
import type { Reads, Store } from '../kernel/store/Store.ts'
import { canonicalAddress } from './canonicalAddress.ts'
import { keyAddresses } from './keyAddresses.ts'

/** Only the Ethereum format writes 0x and 20 bytes of hex. */
const ETHEREUM_ADDRESS = /^0x[0-9a-f]{40}$/i

/**
 * Rows of one address read to find the accounts holding a key. The index is on the address alone,
 * so the page holds other organizations' accounts of that address too (the same secret imported
 * there); a full page may leave some of this organization's out, so the activity is refused rather
 * than judged by some of them.
 */
export const HOLDER_ROWS = 64

/**
 * The most accounts (distinct wallet and address) a key is judged by: each is a scope of its own,
 * times each payload and call. A key held by more (the same seed imported into many wallets) is
 * refused rather than judged by some of them.
 */
export const MAX_HOLDERS = 64

/** One account holding the key: judged as `wallet` and `wallet_account.address` in a scope of its own. */
export interface PolicyHolder {
  walletId: string
  /** Canonical (`canonicalAddress`). */
  address: string
}

/** The key an activity signs or exports with, as the policies judge it. */
export interface PolicySigner {
  /**
   * Every wallet account of the organization holding the key, in any wallet and any address
   * format, each (wallet, address) once, the one named first; none for a key no wallet holds (a
   * private key of its own: it has no `wallet_account`).
   */
  holders: PolicyHolder[]
  /**
   * `eth.tx.from`: the key's Ethereum address (lower case) for a secp256k1 key, however it was
   * named; else the name as given (canonical), as the signer was not found or signs no EVM chain.
   */
  from: string
}

/** The 0x address the chain sees for `account`'s key, when it is a secp256k1 key. */
function evmAddressOf(account: WalletAccountRow): string | undefined {
  if (ETHEREUM_ADDRESS.test(account.address)) return account.address.toLowerCase()
  if (account.curve !== 'CURVE_SECP256K1' || typeof account.publicKey !== 'string') return undefined
  try {
    return addressFromPublicKey('ADDRESS_FORMAT_ETHEREUM', hexToBytes(account.publicKey)).toLowerCase()
  } catch {
    return undefined
  }
}

/** Whether `account` holds the key `found` holds (compressed public keys, as derived). */
const holdsKeyOf = (account: WalletAccountRow, found: WalletAccountRow): boolean =>
  account.curve === found.curve &&
  typeof account.publicKey === 'string' &&
  typeof found.publicKey === 'string' &&
  account.publicKey.toLowerCase() === found.publicKey.toLowerCase()

/** What the lookups read with: a page where `reads` can (the store, a transaction), else every row. */
type HolderReads = Reads & Partial<Pick<Store, 'pageBy'>>

/** At most `HOLDER_ROWS + 1` accounts with `address`, in any organization. */
function accountsAt(reads: HolderReads, address: string): Promise<WalletAccountRow[]> {
  if (typeof reads.pageBy === 'function')
    return reads.pageBy('walletAccounts', {
      field: 'address',
      value: address,
      by: 'id',
      limit: HOLDER_ROWS + 1,
    })
  return reads.findBy('walletAccounts', 'address', address)
}

const tooMany = (named: string, what: string) =>
  new PermissionError({
    message: `the key of ${named} is held by ${what}: the activity is refused rather than judged by some of them`,
    extra: { maxHolders: MAX_HOLDERS },
  })

/**
 * The signer an activity naming `named` is judged by: found as its handler finds it
 * (`findSigner`), then every wallet account of the organization holding its key, found by the
 * key's address in each format of its curve (`keyAddresses`, through the address index: a few
 * rows each, whatever the size of the wallets). A name that finds nothing is judged by that name
 * (the handler refuses it). A key no wallet holds (a private key) has no holder; a private key
 * holding a wallet account's key is judged by that account, as the account is: policies have no
 * keyword for a private key but `eth.tx.from`, the key's. Throws a 403 for a key held by more
 * than `MAX_HOLDERS` accounts, or by an address of more than `HOLDER_ROWS` accounts.
 */
export async function policySignersOf(
  reads: Reads,
  organizationId: string,
  named: string,
): Promise<PolicySigner> {
  let found: WalletAccountRow
  try {
    found = await findSigner(reads, organizationId, named, 'signWith')
  } catch (error) {
    if (error instanceof NotFoundError) return { holders: [], from: canonicalAddress(named) }
    throw error
  }
  const from = evmAddressOf(found) ?? canonicalAddress(named)
  let addresses: readonly string[]
  try {
    addresses = keyAddresses({ curve: found.curve, bytes: hexToBytes(found.publicKey) })
  } catch {
    // Not a point of its curve (no signer is stored so): judged by the account named alone.
    addresses = []
  }
  // `privateKeySigner` shapes a private key as an account of no wallet.
  const own = found.walletId === '' ? [] : [found]
  // Its own address too: another wallet may hold the key in the same format.
  const pages = await mapInOrder(addresses, (address) => accountsAt(reads, address))
  if (pages.some((page) => page.length > HOLDER_ROWS))
    throw tooMany(named, `more than ${HOLDER_ROWS} accounts of one address`)
  const holders = new Map<string, PolicyHolder>()
  for (const account of [...own, ...pages.flat()]) {
    const holds =
      account === found ||
      (account.organizationId === organizationId && account.walletId !== '' && holdsKeyOf(account, found))
    if (!holds) continue
    const address = canonicalAddress(account.address)
    holders.set(`${account.walletId}\u0000${address}`, { walletId: account.walletId, address })
  }
  if (holders.size > MAX_HOLDERS) throw tooMany(named, `more than ${MAX_HOLDERS} accounts`)
  return { holders: [...holders.values()], from }
}
