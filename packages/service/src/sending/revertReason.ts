import type { RevertChainEntry } from '@latchkey/protocol'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { delegateContract } from './delegate/index.ts'
import { RpcRefusedError, type SendRpc } from './sendRpc.ts'

const ERROR_STRING = '0x08c379a0'
const PANIC = '0x4e487b71'

/**
 * Custom errors the service names when a call reverts with them: the delegate contract's own, and
 * the common OpenZeppelin 5 token and utility errors (ERC-6093). Others come back `unknown`, with
 * their selector and data.
 */
const KNOWN_ERRORS = [
  ...delegateContract.abi
    .filter((item) => item.type === 'error')
    .map(
      (item) => `${item.name}(${(item.inputs as readonly { type: string }[]).map((i) => i.type).join(',')})`,
    ),
  'ERC20InsufficientBalance(address,uint256,uint256)',
  'ERC20InvalidSender(address)',
  'ERC20InvalidReceiver(address)',
  'ERC20InsufficientAllowance(address,uint256,uint256)',
  'ERC20InvalidApprover(address)',
  'ERC20InvalidSpender(address)',
  'ERC721InvalidOwner(address)',
  'ERC721NonexistentToken(uint256)',
  'ERC721IncorrectOwner(address,uint256,address)',
  'ERC721InsufficientApproval(address,uint256)',
  'ERC1155InsufficientBalance(address,uint256,uint256,uint256)',
  'SafeERC20FailedOperation(address)',
  'InsufficientBalance(uint256,uint256)',
  'AddressEmptyCode(address)',
  'FailedCall()',
  'FailedDeployment()',
  'OwnableUnauthorizedAccount(address)',
  'EnforcedPause()',
  'ReentrancyGuardReentrantCall()',
]

const SELECTORS = new Map(
  KNOWN_ERRORS.map((signature) => [
    `0x${bytesToHex(keccak_256(utf8ToBytes(signature)).slice(0, 4))}`,
    signature,
  ]),
)

/** One ABI word of `body` (hex without 0x) as a value of `type`; strings follow their offset. */
function decodeWord(body: string, index: number, type: string): string | undefined {
  const word = body.slice(index * 64, index * 64 + 64)
  if (word.length !== 64) return undefined
  if (type === 'address') return `0x${word.slice(24)}`
  if (type === 'bool') return BigInt(`0x${word}`) === 0n ? 'false' : 'true'
  if (/^u?int\d*$/.test(type)) {
    const value = BigInt(`0x${word}`)
    return type.startsWith('int') && value >= 1n << 255n
      ? (value - (1n << 256n)).toString()
      : value.toString()
  }
  if (/^bytes\d+$/.test(type)) return `0x${word.slice(0, 2 * Number(type.slice(5)))}`
  if (type === 'string') {
    const offset = Number(BigInt(`0x${word}`)) * 2
    const length = Number(BigInt(`0x${body.slice(offset, offset + 64) || '0'}`)) * 2
    if (offset + 64 + length > body.length) return undefined
    return new TextDecoder().decode(hexToBytes(body.slice(offset + 64, offset + 64 + length)))
  }
  return undefined
}

/** `Error(string)`'s reason or a panic's code from revert data; undefined for custom errors. */
export function decodeRevert(data: string): string | undefined {
  if (data.startsWith(ERROR_STRING) && data.length >= 10 + 128) return decodeWord(data.slice(10), 0, 'string')
  if (data.startsWith(PANIC) && data.length === 10 + 64)
    return `panic 0x${BigInt(`0x${data.slice(10)}`).toString(16)}`
  return undefined
}

/**
 * The published `revertChain` of revert data (outermost first; the delegate passes a failing
 * call's revert data on as it is, so a batch's chain is the failing call's error):
 * `Error(string)` and `Panic(uint256)` as `native`, a known custom error as `custom` with its
 * name and arguments, anything else as `unknown` with its selector and data.
 */
export function revertChainOf(data: string | undefined, address?: string): RevertChainEntry[] {
  const at = address ? { address } : {}
  const hex = (data ?? '0x').toLowerCase()
  if (!/^0x([0-9a-f]{2})*$/.test(hex) || hex === '0x')
    return [
      {
        ...at,
        errorType: 'native',
        displayMessage: 'execution reverted',
        native: { nativeType: 'execution_reverted' },
      },
    ]
  const selector = hex.slice(0, 10)
  if (selector === ERROR_STRING) {
    const message = decodeRevert(hex)
    if (message !== undefined)
      return [
        {
          ...at,
          errorType: 'native',
          displayMessage: `Error: ${message}`,
          native: { nativeType: 'error_string', message },
        },
      ]
  }
  if (selector === PANIC && hex.length === 10 + 64) {
    const panicCode = BigInt(`0x${hex.slice(10)}`).toString()
    return [
      {
        ...at,
        errorType: 'native',
        displayMessage: `Panic(0x${BigInt(panicCode).toString(16)})`,
        native: { nativeType: 'panic', panicCode },
      },
    ]
  }
  const signature = SELECTORS.get(selector)
  if (signature) {
    const errorName = signature.slice(0, signature.indexOf('('))
    const types = signature
      .slice(errorName.length + 1, -1)
      .split(',')
      .filter(Boolean)
    const values = types.map((type, index) => decodeWord(hex.slice(10), index, type))
    if (values.every((value) => value !== undefined))
      return [
        {
          ...at,
          errorType: 'custom',
          displayMessage: `${errorName}(${values.join(', ')})`,
          custom: { errorName, paramsJson: JSON.stringify(values) },
        },
      ]
  }
  return [
    {
      ...at,
      errorType: 'unknown',
      displayMessage: `execution reverted with custom error ${selector}`,
      unknown: { selector, data: hex },
    },
  ]
}

/**
 * Why a mined transaction reverted, as far as the node tells: the transaction replayed with
 * `eth_call` on the state before its block, its revert data decoded into the published revert chain.
 */
export async function revertReasonOf(
  rpc: SendRpc,
  transaction: { sender: string; raw: unknown },
  receipt: { blockNumber: string },
): Promise<{
  message: string
  revertData?: string
  revertReason?: string
  revertChain?: RevertChainEntry[]
}> {
  const raw = transaction.raw as {
    to?: string
    value?: bigint
    data?: string
    gasLimit?: bigint
    authorizationList?: { address: string }[]
  }
  const call = {
    from: transaction.sender,
    to: raw.to,
    value: `0x${(raw.value ?? 0n).toString(16)}`,
    data: raw.data,
    gas: `0x${(raw.gasLimit ?? 0n).toString(16)}`,
  }
  const parent = `0x${(BigInt(receipt.blockNumber) - 1n).toString(16)}`
  // A transaction that set a delegation (EIP-7702; the service's batches delegate the account they
  // call) replays with the delegation in place: the state before its block has none yet.
  const delegate = raw.authorizationList?.[0]?.address
  const override =
    delegate && raw.to ? { [raw.to]: { code: `0xef0100${delegate.slice(2).toLowerCase()}` } } : undefined
  try {
    await rpc('eth_call', override ? [call, parent, override] : [call, parent])
  } catch (error) {
    if (error instanceof RpcRefusedError) {
      const revertChain = revertChainOf(error.data)
      const reason = error.data ? decodeRevert(error.data) : undefined
      const shown = revertChain[0]!.displayMessage
      return {
        message: `the transaction reverted${shown && shown !== 'execution reverted' ? `: ${shown}` : ''}`,
        ...(error.data ? { revertData: error.data } : {}),
        ...(reason ? { revertReason: reason } : {}),
        revertChain,
      }
    }
  }
  return { message: 'the transaction reverted' }
}
