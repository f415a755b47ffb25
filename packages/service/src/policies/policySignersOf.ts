// Who signs, as the policies see it: the key the handler signs or exports with, not the address
// string its parameter named. `findSigner` takes a wallet account by any of its addresses and a
// private key by its id or any of its addresses, and a wallet keeps the same key under several
// address formats (`create_wallet_accounts` adds a `curve|path` again in another
// `addressFormat`): every one of them signs the same transactions, which the chain sees from the
// key's 0x address. So a DENY on `wallet_account.address` or `eth.tx.from` must hold whichever of
// them the caller names (the limits read the key the same way: limits/signerKey.ts).
import { hexToBytes } from '@noble/hashes/utils.js'
import { findSigner } from '../domain/wallets.ts'
import { NotFoundError } from '../kernel/base/errors.ts'
import { addressFromPublicKey } from '../kernel/crypto/addresses.ts'
import type { WalletAccountRow } from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Store.ts'
import { canonicalAddress } from './canonicalAddress.ts'

/** Only the Ethereum format writes 0x and 20 bytes of hex. */
const ETHEREUM_ADDRESS = /^0x[0-9a-f]{40}$/i

/** The key an activity signs or exports with, as the policies judge it. */
export interface PolicySigner {
  /** The wallet holding the key, judged as `wallet`; none for a private key. */
  walletId?: string
  /**
   * `wallet_account.address` of every account of that wallet holding the key (canonical, the one
   * named first, each address once), each judged in a scope of its own; none for a private key.
   */
  addresses: string[]
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

/** Whether two accounts of one wallet hold the same key (compressed public keys, as derived). */
const sameKey = (a: WalletAccountRow, b: WalletAccountRow): boolean =>
  a.curve === b.curve &&
  typeof a.publicKey === 'string' &&
  a.publicKey.length > 0 &&
  typeof b.publicKey === 'string' &&
  a.publicKey.toLowerCase() === b.publicKey.toLowerCase()

/**
 * The signer an activity naming `named` is judged by: found as its handler finds it
 * (`findSigner`), with every account of its wallet holding the same key. A private key has no
 * account; a name that finds nothing is judged by that name (the handler refuses it). Accounts of
 * one address are judged once: however many a caller adds (the same path spelt `44h` for `44'`),
 * an activity is judged in at most one scope per address format of its key.
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
    if (error instanceof NotFoundError) return { addresses: [], from: canonicalAddress(named) }
    throw error
  }
  const from = evmAddressOf(found) ?? canonicalAddress(named)
  // `privateKeySigner` shapes a private key as an account of no wallet.
  if (found.walletId === '') return { addresses: [], from }
  const others = (await reads.findBy('walletAccounts', 'walletId', found.walletId)).filter(
    (account) =>
      account.id !== found.id && account.organizationId === organizationId && sameKey(account, found),
  )
  const addresses = [...new Set([found, ...others].map((account) => canonicalAddress(account.address)))]
  return { walletId: found.walletId, addresses, from }
}
