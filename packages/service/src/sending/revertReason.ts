import { hexToBytes } from '@noble/hashes/utils.js'
import { RpcRefusedError, type SendRpc } from './sendRpc.ts'

const ERROR_STRING = '0x08c379a0'
const PANIC = '0x4e487b71'

/** `Error(string)`'s reason or a panic's code from revert data; undefined for custom errors. */
export function decodeRevert(data: string): string | undefined {
  if (data.startsWith(ERROR_STRING) && data.length >= 10 + 128) {
    const body = data.slice(10)
    const length = Number(BigInt(`0x${body.slice(64, 128)}`))
    return new TextDecoder().decode(hexToBytes(body.slice(128, 128 + length * 2)))
  }
  if (data.startsWith(PANIC) && data.length === 10 + 64)
    return `panic 0x${BigInt(`0x${data.slice(10)}`).toString(16)}`
  return undefined
}

/**
 * Why a mined transaction reverted, as far as the node tells: the transaction replayed with
 * `eth_call` on the state before its block, its revert data decoded when it is a string or a panic.
 */
export async function revertReasonOf(
  rpc: SendRpc,
  transaction: { sender: string; raw: unknown },
  receipt: { blockNumber: string },
): Promise<{ message: string; revertData?: string; revertReason?: string }> {
  const raw = transaction.raw as { to?: string; value?: bigint; data?: string; gasLimit?: bigint }
  const call = {
    from: transaction.sender,
    to: raw.to,
    value: `0x${(raw.value ?? 0n).toString(16)}`,
    data: raw.data,
    gas: `0x${(raw.gasLimit ?? 0n).toString(16)}`,
  }
  const parent = `0x${(BigInt(receipt.blockNumber) - 1n).toString(16)}`
  try {
    await rpc('eth_call', [call, parent])
  } catch (error) {
    if (error instanceof RpcRefusedError) {
      const reason = error.data ? decodeRevert(error.data) : undefined
      return {
        message: `the transaction reverted${reason ? `: ${reason}` : ''}`,
        ...(error.data ? { revertData: error.data } : {}),
        ...(reason ? { revertReason: reason } : {}),
      }
    }
  }
  return { message: 'the transaction reverted' }
}
