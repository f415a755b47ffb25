// Who signs, as the limits see it: the key, not the address string `signWith` named. One key can be
// stored under several address formats (a wallet's `curve|path` with another `addressFormat`, a
// private key's list of addresses, the same mnemonic imported twice); every one of them signs the
// same transactions, so a limit on one of them covers them all, and a transaction is read as the
// chain sees its signer (the keccak-derived 0x address of a secp256k1 key, the base58 ed25519 key).
import type { Curve } from '@latchkey/protocol'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { base58 } from '@scure/base'
import { addressFromPublicKey } from '../kernel/crypto/addresses.ts'
import type { SpendRequest } from '../kernel/spending.ts'
import { keyAddresses } from '../policies/keyAddresses.ts'
import { normalAddress } from './spendOf.ts'

/** Only the Ethereum format writes 0x and 20 bytes of hex (Sui's and Aptos's are 32 bytes). */
const ETHEREUM_ADDRESS = /^0x[0-9a-f]{40}$/i

/**
 * Whether `address` is base58 of 32 bytes: only the Solana format writes that (Tron, Dogecoin and
 * Bitcoin's base58 addresses are 25 bytes; the others are hex, bech32, base32 or base64).
 */
function isSolanaAddress(address: string): boolean {
  try {
    return base58.decode(address).length === 32
  } catch {
    return false
  }
}

/**
 * The key's addresses in every format of its curve (`keyAddresses`), normalised, by
 * `curve|publicKey`, kept for the last 1,000 keys.
 */
const addressesByKey = new Map<string, Set<string>>()
const KEPT_KEYS = 1_000

function everyAddress(key: { curve: Curve; bytes: Uint8Array }, id: string): Set<string> {
  const kept = addressesByKey.get(id)
  if (kept) return kept
  const addresses = new Set(keyAddresses(key).map(normalAddress))
  if (addressesByKey.size >= KEPT_KEYS) addressesByKey.delete(addressesByKey.keys().next().value!)
  addressesByKey.set(id, addresses)
  return addresses
}

export interface SignerKey {
  /** The signer's address on EVM chains (lower case): the transactions' `from`. */
  readonly evm: string | undefined
  /** The signer's address on Solana (base58 of its ed25519 key): its transfers' source, its fee payer. */
  readonly solana: string | undefined
  /** Whether `address` (a limit's, normalised) is one of the key's addresses, in any format. */
  answersTo(address: string): boolean
}

/** The key of what `request` signs with: its public key, or (a Solana signer named without one) its address. */
function keyOf(request: SpendRequest): { curve: Curve; bytes: Uint8Array } | undefined {
  try {
    if (request.key) return { curve: request.key.curve, bytes: hexToBytes(request.key.publicKey) }
    // A Solana address is the ed25519 public key itself.
    const bytes = base58.decode(request.signer)
    return bytes.length === 32 ? { curve: 'CURVE_ED25519', bytes } : undefined
  } catch {
    return undefined
  }
}

/**
 * The signer of `request` as a key. What costs something is worked out when first asked: the
 * 0x address of a signer named by another format, the key's other addresses (only for a limit on
 * an address that is neither the one named, nor a 0x or Solana address).
 */
export function signerKeyOf(request: SpendRequest): SignerKey {
  const stored = normalAddress(request.signer)
  const key = keyOf(request)
  let evm: string | undefined | null = null
  const evmAddress = () => {
    if (evm !== null) return evm
    if (ETHEREUM_ADDRESS.test(stored)) evm = stored
    else if (key?.curve === 'CURVE_SECP256K1')
      evm = addressFromPublicKey('ADDRESS_FORMAT_ETHEREUM', key.bytes).toLowerCase()
    else evm = undefined
    return evm
  }
  const solana = key?.curve === 'CURVE_ED25519' ? base58.encode(key.bytes) : undefined
  return {
    get evm() {
      return evmAddress()
    },
    solana,
    answersTo(address) {
      if (address === stored) return true
      if (!key) return false
      if (ETHEREUM_ADDRESS.test(address)) return address === evmAddress()
      if (isSolanaAddress(address)) return address === solana
      return everyAddress(key, `${key.curve}|${bytesToHex(key.bytes)}`).has(address)
    },
  }
}
