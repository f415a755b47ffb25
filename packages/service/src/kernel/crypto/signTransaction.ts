import type { TransactionType } from '@latchkey/protocol'
import { ed25519 } from '@noble/curves/ed25519.js'
import { bytesToNumberBE } from '@noble/curves/utils.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { type Address, getAddressDecoder } from '@solana/addresses'
import type { SignatureBytes } from '@solana/keys'
import {
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
  type LegacyCompiledTransactionMessage,
  type V0CompiledTransactionMessage,
} from '@solana/transaction-messages'
import { getTransactionDecoder, getTransactionEncoder } from '@solana/transactions'
import { Transaction } from 'micro-eth-signer'
import { CryptoInputError } from './errors.ts'
import { signDigest } from './secp256k1Sign.ts'

/** The field every decoding problem is reported on. */
const FIELD = 'unsignedTransaction'

/** Ethereum transaction kinds `sign_transaction` accepts (micro-eth-signer's names). */
const ETHEREUM_TYPES = new Set(['legacy', 'eip2930', 'eip1559', 'eip7702'])

function hexBytes(hex: string): Uint8Array {
  const clean = typeof hex === 'string' ? hex.trim().replace(/^0x/i, '') : ''
  if (!clean || !/^([0-9a-fA-F]{2})+$/.test(clean))
    throw new CryptoInputError('unsignedTransaction must be a non-empty hex string', FIELD)
  return hexToBytes(clean.toLowerCase())
}

type EthereumTransaction = ReturnType<typeof Transaction.fromHex>

function decodeEthereum(hex: string): EthereumTransaction {
  const bytes = hexBytes(hex)
  let tx: EthereumTransaction
  try {
    tx = Transaction.fromBytes(bytes, false)
  } catch (error) {
    throw new CryptoInputError(
      `unsignedTransaction is not an Ethereum transaction: ${(error as Error).message}`,
      FIELD,
    )
  }
  if (!ETHEREUM_TYPES.has(tx.type))
    throw new CryptoInputError(
      `${tx.type} transactions are not supported (legacy, EIP-2930, EIP-1559 and EIP-7702 are)`,
      FIELD,
    )
  if (tx.isSigned) throw new CryptoInputError('unsignedTransaction already carries a signature', FIELD)
  if ((tx.raw as { chainId?: bigint }).chainId === undefined)
    throw new CryptoInputError(
      'legacy transactions need an EIP-155 chain id (a chainless one could be replayed on any chain)',
      FIELD,
    )
  return tx
}

interface DecodedSolana {
  transaction: ReturnType<ReturnType<typeof getTransactionDecoder>['decode']>
  message: (LegacyCompiledTransactionMessage | V0CompiledTransactionMessage) & { lifetimeToken: string }
  signers: Address[]
}

function decodeSolana(hex: string): DecodedSolana {
  const bytes = hexBytes(hex)
  try {
    const transaction = getTransactionDecoder().decode(bytes)
    const message = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes)
    if (message.version !== 'legacy' && message.version !== 0)
      throw new Error(`message version ${String(message.version)} is not supported (legacy and v0 are)`)
    // What is signed is the message's bytes as given: they must be exactly the message, as a
    // validator reads it. Bytes past its end, or a header naming more signers than it has accounts,
    // no validator takes, and they let other bytes pass for one (an Aptos fee-payer transaction of
    // the same ed25519 key parses so, its script's argument chosen).
    if (message.header.numSignerAccounts > message.staticAccounts.length)
      throw new Error(
        `its header names ${message.header.numSignerAccounts} signers for ${message.staticAccounts.length} accounts`,
      )
    const exact = getCompiledTransactionMessageEncoder().encode(message)
    if (
      exact.length !== transaction.messageBytes.length ||
      exact.some((byte, i) => byte !== transaction.messageBytes[i])
    )
      throw new Error(
        `its message is not exactly a Solana message (${transaction.messageBytes.length} bytes where the message read is ${exact.length}, or spelled otherwise)`,
      )
    const signers = message.staticAccounts.slice(0, message.header.numSignerAccounts)
    const slots = Object.keys(transaction.signatures)
    if (slots.length !== signers.length || signers.some((s) => !slots.includes(s)))
      throw new Error('the signature slots do not match the message’s required signers')
    return { transaction, message: message as DecodedSolana['message'], signers }
  } catch (error) {
    if (error instanceof CryptoInputError) throw error
    throw new CryptoInputError(
      `unsignedTransaction is not a Solana wire transaction: ${(error as Error).message}`,
      FIELD,
    )
  }
}

/** The Solana address (base58 public key) of an ed25519 private key. */
const solanaAddressOf = (privateKey: Uint8Array) =>
  getAddressDecoder().decode(ed25519.getPublicKey(privateKey))

export interface SignTransactionInput {
  type: TransactionType
  /** Hex (0x optional): an unsigned EIP-2718/legacy Ethereum transaction, or a Solana wire transaction. */
  unsignedTransaction: string
  /** The signing account's key: secp256k1 for Ethereum, ed25519 for Solana. */
  privateKey: Uint8Array
}

/**
 * Signs a transaction with one key. Ethereum: decodes with micro-eth-signer, signs deterministically
 * (RFC 6979) as the key's address; legacy needs an EIP-155 chain id. Solana: decodes the wire
 * transaction and its legacy/v0 message with @solana/kit's codecs, checks the key's address is a required
 * signer and fills its slot (other slots are kept). Returns the signed transaction as hex without 0x,
 * as the reference service does. Throws CryptoInputError (field `unsignedTransaction` or `signWith`).
 */
export function signTransaction(input: SignTransactionInput): string {
  return signAndDescribe(input, false).signedTransaction
}

/**
 * `signTransaction`, also answering the transaction as a policy reads it
 * (`decodeTransactionForPolicy`, without `from`) from the same decoding: what a signing under a
 * spending limit counts, worked out in the crypto worker that signs it.
 */
export function signAndDescribeTransaction(input: SignTransactionInput): {
  signedTransaction: string
  policy: PolicyTransaction
} {
  const { signedTransaction, policy } = signAndDescribe(input, true)
  return { signedTransaction, policy: policy! }
}

function signAndDescribe(
  input: SignTransactionInput,
  describe: boolean,
): { signedTransaction: string; policy?: PolicyTransaction } {
  const { type, unsignedTransaction, privateKey } = input
  if (type === 'TRANSACTION_TYPE_ETHEREUM') {
    const tx = decodeEthereum(unsignedTransaction)
    let signed: EthereumTransaction
    try {
      // What `tx.signBy(privateKey, false)` signs, signed by libsecp256k1 (secp256k1Sign.ts): the
      // same deterministic signature, four times as fast.
      const recovered = signDigest(keccak_256(tx.toBytes({ includeSignature: false })), privateKey)
      // The yellow paper allows recovery ids 0 and 1 only (2 and 3 need r ≥ n: about 2⁻¹²⁸).
      if (recovered[0]! > 1) throw new Error('invalid signature rec=2 or 3')
      const raw = {
        ...tx.raw,
        r: bytesToNumberBE(recovered.subarray(1, 33)),
        s: bytesToNumberBE(recovered.subarray(33, 65)),
        yParity: recovered[0]!,
      }
      signed = new Transaction(tx.type, raw as typeof tx.raw, { strict: false })
    } catch (error) {
      throw new CryptoInputError(`cannot sign this transaction: ${(error as Error).message}`, FIELD)
    }
    const signedTransaction = signed.toHex().replace(/^0x/, '')
    return describe
      ? { signedTransaction, policy: { eth: { tx: ethereumPolicyOf(tx) } } }
      : { signedTransaction }
  }
  if (type === 'TRANSACTION_TYPE_SOLANA') {
    const decoded = decodeSolana(unsignedTransaction)
    const { transaction, signers } = decoded
    const address = solanaAddressOf(privateKey)
    if (!signers.includes(address))
      throw new CryptoInputError(
        `${address} is not a required signer of this transaction (signers: ${signers.join(', ')})`,
        'signWith',
      )
    const signature = ed25519.sign(
      transaction.messageBytes as unknown as Uint8Array,
      privateKey,
    ) as SignatureBytes
    const signedTransaction = {
      ...transaction,
      signatures: { ...transaction.signatures, [address]: signature },
    }
    const signedHex = bytesToHex(getTransactionEncoder().encode(signedTransaction) as Uint8Array)
    return describe
      ? { signedTransaction: signedHex, policy: { solana: { tx: solanaPolicyOf(decoded) } } }
      : { signedTransaction: signedHex }
  }
  throw new CryptoInputError(`unknown transaction type ${String(type)}`, 'type')
}

/** Solana's System Program, whose instruction 2 is a lamport transfer. */
const SYSTEM_PROGRAM = '11111111111111111111111111111111'

const dec = (value: bigint | number | undefined) =>
  value === undefined ? undefined : BigInt(value).toString()

/** Ethereum transaction fields a policy reads; integers are decimal strings. */
export interface EthereumPolicyTransaction {
  type: 'legacy' | 'eip2930' | 'eip1559' | 'eip7702'
  /** The signer (`signWith`), lower-case; absent when the caller did not give it. */
  from?: string
  /** Lower-case recipient; absent for contract creation. */
  to?: string
  value: string
  /** 0x-prefixed call data. */
  data: string
  chain_id: string
  nonce: string
  gas: string
  gas_price?: string
  max_fee_per_gas?: string
  max_priority_fee_per_gas?: string
  access_list: { address: string; storage_keys: string[] }[]
  authorization_list: { chain_id: string; address: string; nonce: string }[]
}

/** Solana transaction fields a policy reads; lamport amounts are decimal strings. */
export interface SolanaPolicyTransaction {
  version: 'legacy' | 0
  /**
   * Static account keys, then `<lookupTable>#<index>` for keys loaded from address lookup tables:
   * every table's writable ones, then every table's read-only ones, as the runtime loads them.
   */
  account_keys: string[]
  /** The required signers (the first account keys). */
  signers: string[]
  /** Distinct programs the instructions call. */
  program_keys: string[]
  instructions: { program_key: string; accounts: string[]; data: string }[]
  /** System Program transfers. */
  transfers: { from: string; to: string; amount: string }[]
  recent_blockhash: string
}

export type PolicyTransaction =
  | { eth: { tx: EthereumPolicyTransaction } }
  | { solana: { tx: SolanaPolicyTransaction } }

const lower = (value: string) => value.toLowerCase()

function ethereumPolicyOf(tx: EthereumTransaction, from?: string): EthereumPolicyTransaction {
  const raw = tx.raw as Record<string, unknown> & {
    chainId: bigint
    nonce: bigint
    gasLimit: bigint
    value: bigint
    data: string
    to?: string
    gasPrice?: bigint
    maxFeePerGas?: bigint
    maxPriorityFeePerGas?: bigint
    accessList?: { address: string; storageKeys: string[] }[]
    authorizationList?: { chainId: bigint; address: string; nonce: bigint }[]
  }
  const out: EthereumPolicyTransaction = {
    type: tx.type as EthereumPolicyTransaction['type'],
    value: raw.value.toString(),
    data: raw.data.startsWith('0x') ? raw.data : `0x${raw.data}`,
    chain_id: raw.chainId.toString(),
    nonce: raw.nonce.toString(),
    gas: raw.gasLimit.toString(),
    access_list: (raw.accessList ?? []).map((entry) => ({
      address: lower(entry.address),
      storage_keys: entry.storageKeys.map(lower),
    })),
    authorization_list: (raw.authorizationList ?? []).map((auth) => ({
      chain_id: auth.chainId.toString(),
      address: lower(auth.address),
      nonce: auth.nonce.toString(),
    })),
  }
  if (from) out.from = lower(from)
  if (raw.to) out.to = lower(raw.to)
  if (raw.gasPrice !== undefined) out.gas_price = dec(raw.gasPrice) as string
  if (raw.maxFeePerGas !== undefined) out.max_fee_per_gas = dec(raw.maxFeePerGas) as string
  if (raw.maxPriorityFeePerGas !== undefined)
    out.max_priority_fee_per_gas = dec(raw.maxPriorityFeePerGas) as string
  return out
}

function solanaPolicyOf({ message, signers }: DecodedSolana): SolanaPolicyTransaction {
  // The runtime appends every table's writable addresses, table by table, then every table's
  // read-only ones: an instruction's index past the static keys counts in that order.
  const tables = message.version === 0 ? (message.addressTableLookups ?? []) : []
  const lookups = [
    ...tables.flatMap((l) => l.writableIndexes.map((i) => `${l.lookupTableAddress}#${i}`)),
    ...tables.flatMap((l) => l.readonlyIndexes.map((i) => `${l.lookupTableAddress}#${i}`)),
  ]
  const keys = [...message.staticAccounts, ...lookups] as string[]
  const key = (index: number) => keys[index] ?? `#${index}`
  const instructions = message.instructions.map((ix) => ({
    program_key: key(ix.programAddressIndex),
    accounts: (ix.accountIndices ?? []).map(key),
    data: bytesToHex((ix.data ?? new Uint8Array()) as Uint8Array),
  }))
  const transfers = message.instructions.flatMap((ix) => {
    const data = (ix.data ?? new Uint8Array()) as Uint8Array
    const accounts = ix.accountIndices ?? []
    if (key(ix.programAddressIndex) !== SYSTEM_PROGRAM || data.length < 12) return []
    const moved = systemLamports(data)
    if (!moved || accounts.length <= Math.max(moved.from, moved.to)) return []
    return [
      {
        from: key(accounts[moved.from] as number),
        to: key(accounts[moved.to] as number),
        amount: moved.amount.toString(),
      },
    ]
  })
  return {
    version: message.version as 'legacy' | 0,
    account_keys: keys,
    signers,
    program_keys: [...new Set(instructions.map((ix) => ix.program_key))],
    instructions,
    transfers,
    recent_blockhash: String(message.lifetimeToken),
  }
}

/**
 * The lamports a System Program instruction moves, and the indexes of its accounts they go from
 * and to, or undefined for one that moves none. Every instruction that pays lamports from one
 * account to another is a transfer to the policies (`solana.tx.transfers`): Transfer (2),
 * TransferWithSeed (11), CreateAccount (0) and CreateAccountWithSeed (3), which fund the new
 * account (an account whose key the payee may hold), and WithdrawNonceAccount (5). The program
 * reads each layout's bytes and ignores any after them (bincode allows trailing bytes), so a
 * longer one still moves the lamports.
 */
function systemLamports(data: Uint8Array): { amount: bigint; from: number; to: number } | undefined {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength)
  const u64 = (at: number) => (data.length >= at + 8 ? view.getBigUint64(at, true) : undefined)
  const at = (amount: bigint | undefined, from: number, to: number) =>
    amount === undefined ? undefined : { amount, from, to }
  switch (view.getUint32(0, true)) {
    case 0: // CreateAccount { lamports, space, owner }: [funding, new account]
    case 2: // Transfer { lamports }: [from, to]
    case 5: // WithdrawNonceAccount(lamports): [nonce account, recipient, …]
      return at(u64(4), 0, 1)
    case 11: // TransferWithSeed { lamports, seed, owner }: [funding, base, to]
      return at(u64(4), 0, 2)
    case 3: {
      // CreateAccountWithSeed { base, seed: u64 length + bytes, lamports, space, owner }: [funding, new account, …]
      const length = u64(36)
      if (length === undefined || length > BigInt(data.length)) return undefined
      return at(u64(44 + Number(length)), 0, 1)
    }
    default:
      return undefined
  }
}

/**
 * The decoded transaction in the shape a policy engine reads: `{ eth: { tx } }` or
 * `{ solana: { tx } }` with snake_case fields and every integer (wei, gas, lamports, nonces, chain ids)
 * as a decimal string, so the result is JSON-safe and can be stored with the activity.
 * `from` (the signer) is filled in for Ethereum when given. Throws CryptoInputError on bad input.
 */
export function decodeTransactionForPolicy(
  type: TransactionType,
  unsignedTransaction: string,
  options: { from?: string } = {},
): PolicyTransaction {
  if (type === 'TRANSACTION_TYPE_ETHEREUM')
    return { eth: { tx: ethereumPolicyOf(decodeEthereum(unsignedTransaction), options.from) } }
  if (type === 'TRANSACTION_TYPE_SOLANA')
    return { solana: { tx: solanaPolicyOf(decodeSolana(unsignedTransaction)) } }
  throw new CryptoInputError(`unknown transaction type ${String(type)}`, 'type')
}
