import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { CryptoInputError } from '../../kernel/crypto/errors.ts'

/**
 * One call of a batch the delegate runs from the user's account. `to` is a 0x-prefixed 20-byte
 * address (the zero address means the account itself, as in ERC-7821), `data` 0x-prefixed hex.
 */
export interface DelegateCall {
  to: string
  value: bigint
  data: string
}

/** What the account signs so that a sponsor may run `calls` from it once, before `deadline`. */
export interface BatchExecutionParameters {
  /** EIP-155 chain id: the signature is only valid on this chain. */
  chainId: bigint
  /** The user's EOA, delegated to LatchkeyDelegate: the EIP-712 `verifyingContract`. */
  account: string
  calls: readonly DelegateCall[]
  /** The delegate's batch nonce of the account (`readDelegateNonce`). */
  nonce: bigint
  /** Unix seconds after which the batch is refused. */
  deadline: bigint
}

/** The delegate's EIP-712 domain name and version (`EIP712("LatchkeyDelegate", "1")` in the contract). */
export const DELEGATE_DOMAIN = { name: 'LatchkeyDelegate', version: '1' } as const

/** The EIP-712 types of a batch, as the contract hashes them. */
export const BATCH_EXECUTION_TYPES = {
  EIP712Domain: [
    { name: 'name', type: 'string' },
    { name: 'version', type: 'string' },
    { name: 'chainId', type: 'uint256' },
    { name: 'verifyingContract', type: 'address' },
  ],
  BatchExecution: [
    { name: 'calls', type: 'Call[]' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
  ],
  Call: [
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'data', type: 'bytes' },
  ],
} as const

/**
 * ERC-7821 execution mode "batch with opData": the sponsor's `execute` carries the account's
 * signature. (Mode `0x01` followed by zeros, without opData, is for the account calling itself.)
 */
export const EXECUTE_BATCH_WITH_OP_DATA_MODE = `0x01000000000078210001${'0'.repeat(44)}` as const

/** The EIP-712 typed data of a batch, JSON-serialisable (integers as decimal strings). */
export interface BatchExecutionTypedData {
  types: typeof BATCH_EXECUTION_TYPES
  primaryType: 'BatchExecution'
  domain: { name: string; version: string; chainId: string; verifyingContract: string }
  message: {
    calls: { to: string; value: string; data: string }[]
    nonce: string
    deadline: string
  }
}

const UINT256_MAX = (1n << 256n) - 1n
const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const HEX = /^0x(?:[0-9a-fA-F]{2})*$/

function checkUint(value: bigint, field: string): bigint {
  if (typeof value !== 'bigint' || value < 0n || value > UINT256_MAX)
    throw new CryptoInputError(`${field} must be an integer from 0 to 2^256-1`, field)
  return value
}

function checkAddress(value: string, field: string): string {
  if (typeof value !== 'string' || !ADDRESS.test(value))
    throw new CryptoInputError(`${field} must be a 0x-prefixed 20-byte hex address`, field)
  return value.toLowerCase()
}

function checkHex(value: string, field: string): Uint8Array {
  if (typeof value !== 'string' || !HEX.test(value))
    throw new CryptoInputError(`${field} must be 0x-prefixed hex of whole bytes`, field)
  return hexToBytes(value.slice(2))
}

interface CheckedCall {
  to: string
  value: bigint
  data: Uint8Array
}

function checkCalls(calls: readonly DelegateCall[]): CheckedCall[] {
  return calls.map((call, i) => ({
    to: checkAddress(call.to, `calls[${i}].to`),
    value: checkUint(call.value, `calls[${i}].value`),
    data: checkHex(call.data, `calls[${i}].data`),
  }))
}

/** The typed data the account signs (e.g. as a sign_raw_payload EIP-712 payload). */
export function batchExecutionTypedData(parameters: BatchExecutionParameters): BatchExecutionTypedData {
  const calls = checkCalls(parameters.calls)
  return {
    types: BATCH_EXECUTION_TYPES,
    primaryType: 'BatchExecution',
    domain: {
      ...DELEGATE_DOMAIN,
      chainId: checkUint(parameters.chainId, 'chainId').toString(),
      verifyingContract: checkAddress(parameters.account, 'account'),
    },
    message: {
      calls: calls.map((call) => ({
        to: call.to,
        value: call.value.toString(),
        data: `0x${bytesToHex(call.data)}`,
      })),
      nonce: checkUint(parameters.nonce, 'nonce').toString(),
      deadline: checkUint(parameters.deadline, 'deadline').toString(),
    },
  }
}

/** A 32-byte big-endian ABI word. */
function word(value: bigint): Uint8Array {
  return hexToBytes(value.toString(16).padStart(64, '0'))
}

function addressWord(address: string): Uint8Array {
  return word(BigInt(address))
}

const typeHash = (type: string) => keccak_256(utf8ToBytes(type))
const DOMAIN_TYPEHASH = typeHash(
  'EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)',
)
const CALL_TYPEHASH = typeHash('Call(address to,uint256 value,bytes data)')
const BATCH_EXECUTION_TYPEHASH = typeHash(
  'BatchExecution(Call[] calls,uint256 nonce,uint256 deadline)Call(address to,uint256 value,bytes data)',
)

/**
 * The EIP-712 digest of a batch: what the account's key signs and what the contract's
 * `hashBatchExecution` computes (keccak256(0x1901 ‖ domainSeparator ‖ structHash)).
 */
export function batchExecutionDigest(parameters: BatchExecutionParameters): Uint8Array {
  const calls = checkCalls(parameters.calls)
  const domainSeparator = keccak_256(
    concatBytes(
      DOMAIN_TYPEHASH,
      keccak_256(utf8ToBytes(DELEGATE_DOMAIN.name)),
      keccak_256(utf8ToBytes(DELEGATE_DOMAIN.version)),
      word(checkUint(parameters.chainId, 'chainId')),
      addressWord(checkAddress(parameters.account, 'account')),
    ),
  )
  const callHashes = calls.map((call) =>
    keccak_256(concatBytes(CALL_TYPEHASH, addressWord(call.to), word(call.value), keccak_256(call.data))),
  )
  const structHash = keccak_256(
    concatBytes(
      BATCH_EXECUTION_TYPEHASH,
      keccak_256(concatBytes(...callHashes)),
      word(checkUint(parameters.nonce, 'nonce')),
      word(checkUint(parameters.deadline, 'deadline')),
    ),
  )
  return keccak_256(concatBytes(new Uint8Array([0x19, 0x01]), domainSeparator, structHash))
}

/** `bytes` in the ABI's tail encoding: its length, then its content padded to whole words. */
function dynamicBytes(data: Uint8Array): Uint8Array {
  const padded = new Uint8Array(Math.ceil(data.length / 32) * 32)
  padded.set(data)
  return concatBytes(word(BigInt(data.length)), padded)
}

/** abi.encode of a tuple whose parts are given already encoded, each as head word or tail. */
function encodeTuple(parts: ({ head: Uint8Array } | { tail: Uint8Array })[]): Uint8Array {
  let offset = BigInt(parts.length * 32)
  const heads: Uint8Array[] = []
  const tails: Uint8Array[] = []
  for (const part of parts) {
    if ('head' in part) heads.push(part.head)
    else {
      heads.push(word(offset))
      tails.push(part.tail)
      offset += BigInt(part.tail.length)
    }
  }
  return concatBytes(...heads, ...tails)
}

/** abi.encode of a dynamic array of dynamic elements, each given already encoded. */
function encodeDynamicArray(elements: Uint8Array[]): Uint8Array {
  return concatBytes(word(BigInt(elements.length)), encodeTuple(elements.map((tail) => ({ tail }))))
}

/** The selector of `execute(bytes32,bytes)` (ERC-7821). */
const EXECUTE_SELECTOR = keccak_256(utf8ToBytes('execute(bytes32,bytes)')).slice(0, 4)
/** `EXECUTE_SELECTOR` as 0x-prefixed hex: how a batch's calldata (the account calling itself) starts. */
export const EXECUTE_SELECTOR_HEX = `0x${bytesToHex(EXECUTE_SELECTOR)}`
/**
 * The topic of the delegate's `BatchExecuted(uint256 indexed nonce, address indexed relayer)`,
 * which the account emits whenever its delegate runs a batch.
 */
export const BATCH_EXECUTED_TOPIC = `0x${bytesToHex(keccak_256(utf8ToBytes('BatchExecuted(uint256,address)')))}`

/** What the sponsor's call to the account carries: the batch and the account's signature over it. */
export interface ExecuteBatchParameters {
  calls: readonly DelegateCall[]
  nonce: bigint
  deadline: bigint
  /** The account's 65-byte signature (r ‖ s ‖ v) over `batchExecutionDigest`, 0x-prefixed hex. */
  signature: string
}

/** ABI `Call[]` (`(address to, uint256 value, bytes data)[]`), the calls of an ERC-7821 batch. */
function encodeCalls(calls: readonly CheckedCall[]) {
  return encodeDynamicArray(
    calls.map((call) =>
      encodeTuple([
        { head: addressWord(call.to) },
        { head: word(call.value) },
        { tail: dynamicBytes(call.data) },
      ]),
    ),
  )
}

/**
 * The calldata of the sponsor's transaction to the account: `execute(mode, executionData)` with
 * `executionData = abi.encode(Call[] calls, abi.encode(nonce, deadline, signature))` (ERC-7821
 * batch with opData).
 */
export function encodeExecuteBatch(parameters: ExecuteBatchParameters): string {
  const calls = checkCalls(parameters.calls)
  const signature = checkHex(parameters.signature, 'signature')
  if (signature.length !== 65) throw new CryptoInputError('signature must be 65 bytes (r, s, v)', 'signature')
  const encodedCalls = encodeDynamicArray(
    calls.map((call) =>
      encodeTuple([
        { head: addressWord(call.to) },
        { head: word(call.value) },
        { tail: dynamicBytes(call.data) },
      ]),
    ),
  )
  const opData = encodeTuple([
    { head: word(checkUint(parameters.nonce, 'nonce')) },
    { head: word(checkUint(parameters.deadline, 'deadline')) },
    { tail: dynamicBytes(signature) },
  ])
  const executionData = encodeTuple([{ tail: encodedCalls }, { tail: dynamicBytes(opData) }])
  const args = encodeTuple([
    { head: hexToBytes(EXECUTE_BATCH_WITH_OP_DATA_MODE.slice(2)) },
    { tail: dynamicBytes(executionData) },
  ])
  return `0x${bytesToHex(concatBytes(EXECUTE_SELECTOR, args))}`
}

/** ERC-7821 batch mode without opData: only the account itself may use it (`msg.sender == address(this)`). */
export const EXECUTE_BATCH_MODE = `0x01${'0'.repeat(62)}` as const

/**
 * `execute(bytes32,bytes)` calldata of `calls` in batch mode without opData, as the account calls
 * itself: what a simulation runs (`eth_call` from the account to itself with the delegation in
 * place) to see the calls a signed batch would make, without a signature or a batch nonce.
 */
export function encodeSelfExecuteBatch(callsGiven: readonly DelegateCall[]): string {
  const encodedCalls = encodeCalls(checkCalls(callsGiven))
  const executionData = encodeTuple([{ tail: encodedCalls }])
  const args = encodeTuple([
    { head: hexToBytes(EXECUTE_BATCH_MODE.slice(2)) },
    { tail: dynamicBytes(executionData) },
  ])
  return `0x${bytesToHex(concatBytes(EXECUTE_SELECTOR, args))}`
}
