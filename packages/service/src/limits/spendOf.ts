// What one signature spends of one limit's asset, read from the transaction itself: wei of every
// call, ERC-20 `transfer`, `transferFrom`, `approve` and `increaseAllowance` calldata, lamports of
// System Program transfers. What cannot be read under a limit is refused, never let through.
import { PermissionError } from '../kernel/base/errors.ts'
import type { SpendDescription } from '../kernel/spending.ts'
import type { SpendingLimitRow } from '../kernel/store/model.ts'

/** ERC-20 selectors whose amount a limit counts: the destination is the recipient or the spender. */
const ERC20 = {
  a9059cbb: { name: 'transfer', destination: 0, amount: 1, words: 2 },
  '23b872dd': { name: 'transferFrom', destination: 1, amount: 2, words: 3 },
  '095ea7b3': { name: 'approve', destination: 0, amount: 1, words: 2 },
  '39509351': { name: 'increaseAllowance', destination: 0, amount: 1, words: 2 },
} as const

const SYSTEM_PROGRAM = '11111111111111111111111111111111'
/** Programs that move no lamports of the signer: compute budget, memo (v1 and v2). */
const HARMLESS_PROGRAMS = new Set([
  'ComputeBudget111111111111111111111111111111',
  'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr',
  'Memo1UhkJRfHyvLMcVucJwxXeuD3j5oJwL4pdG5JNo',
])

/** An EVM address as the limits compare it; Solana's base58 is case-sensitive and kept. */
export const normalAddress = (address: string) => (/^0x/i.test(address) ? address.toLowerCase() : address)

/** One amount a signature spends of a limit's asset, and where it goes. */
interface Outflow {
  amount: bigint
  destination: string | undefined
}

const undecodable = (limit: SpendingLimitRow, reason: string) =>
  new PermissionError({
    code: 'SPEND_UNDECODABLE',
    message: `spending limit ${limit.id} (${limit.name}) covers this signer, and ${reason}: the service cannot tell what it spends, so it does not sign it while the limit is in force`,
    extra: { spendingLimitId: limit.id },
  })

const word = (data: string, index: number) => data.slice(8 + 64 * index, 8 + 64 * (index + 1))

/** The outflows of one ERC-20 call to the limit's token, or a refusal for calldata it cannot read. */
function erc20Outflow(limit: SpendingLimitRow, data: string): Outflow[] {
  const hex = data.replace(/^0x/i, '').toLowerCase()
  if (hex.length === 0) return []
  const selector = hex.slice(0, 8) as keyof typeof ERC20
  const shape = ERC20[selector]
  if (!shape)
    throw undecodable(
      limit,
      `its call to the token ${limit.asset.type === 'SPENDING_LIMIT_ASSET_ERC20' ? limit.asset.contract : ''} has the selector 0x${hex.slice(0, 8)}, which is not transfer, transferFrom, approve or increaseAllowance`,
    )
  if (hex.length !== 8 + 64 * shape.words || !/^[0-9a-f]*$/.test(hex))
    throw undecodable(limit, `its ${shape.name} calldata is not ${shape.words} ABI words`)
  const destination = `0x${word(hex, shape.destination).slice(24)}`
  return [{ amount: BigInt(`0x${word(hex, shape.amount)}`), destination }]
}

/** The outflows of an EVM signature under `limit` (nothing when the limit is of another chain). */
function evmOutflows(limit: SpendingLimitRow, spend: Extract<SpendDescription, { kind: 'evm' }>): Outflow[] {
  // A transaction without a chain id is valid on every chain: every EVM limit counts it.
  if (
    spend.caip2 === undefined ? !limit.asset.caip2.startsWith('eip155:') : limit.asset.caip2 !== spend.caip2
  )
    return []
  if (spend.delegates)
    throw undecodable(limit, 'the transaction carries an EIP-7702 authorization (code for the account)')
  if (limit.asset.type === 'SPENDING_LIMIT_ASSET_NATIVE')
    return spend.calls
      .filter((call) => call.value > 0n)
      .map((call) => ({ amount: call.value, destination: call.to && normalAddress(call.to) }))
  const token = normalAddress(limit.asset.contract)
  return spend.calls.flatMap((call) =>
    call.to && normalAddress(call.to) === token ? erc20Outflow(limit, call.data) : [],
  )
}

/** The outflows of a Solana signature under `limit`: System Program transfers from the signer. */
function solanaOutflows(
  limit: SpendingLimitRow,
  spend: Extract<SpendDescription, { kind: 'solana' }>,
  signer: string,
): Outflow[] {
  if (!limit.asset.caip2.startsWith('solana:')) return []
  if (limit.asset.type !== 'SPENDING_LIMIT_ASSET_NATIVE')
    throw undecodable(limit, 'SPL token transfers are not read yet')
  const { tx } = spend
  for (const [index, instruction] of tx.instructions.entries()) {
    if (HARMLESS_PROGRAMS.has(instruction.program_key)) continue
    const transfer =
      instruction.program_key === SYSTEM_PROGRAM &&
      instruction.data.length === 24 &&
      instruction.data.startsWith('02000000')
    if (!transfer)
      throw undecodable(
        limit,
        `instruction ${index} calls ${instruction.program_key === SYSTEM_PROGRAM ? 'a System Program instruction other than transfer' : `the program ${instruction.program_key}`}`,
      )
  }
  return tx.transfers
    .filter((transfer) => transfer.from === signer)
    .map((transfer) => ({ amount: BigInt(transfer.amount), destination: transfer.to }))
}

/**
 * What a signature by `signer` spends of `limit`'s asset: 0 when it spends none (another chain, a
 * call that moves nothing). Refuses what it cannot read and a destination off the allow-list.
 */
export function spendOf(limit: SpendingLimitRow, spend: SpendDescription, signer: string): bigint {
  if (spend.kind === 'opaque')
    throw undecodable(
      limit,
      `${spend.what} is not a transaction; sign transactions with sign_transaction instead`,
    )
  const outflows = spend.kind === 'evm' ? evmOutflows(limit, spend) : solanaOutflows(limit, spend, signer)
  let total = 0n
  for (const { amount, destination } of outflows) {
    if (amount === 0n) continue
    if (
      limit.allowedDestinations.length > 0 &&
      !(destination && limit.allowedDestinations.includes(normalAddress(destination)))
    )
      throw new PermissionError({
        code: 'SPEND_DESTINATION_NOT_ALLOWED',
        message: `spending limit ${limit.id} (${limit.name}) allows its asset to go only to ${limit.allowedDestinations.join(', ')}; this signature sends it to ${destination ?? 'a new contract'}`,
        extra: { spendingLimitId: limit.id, destination: destination ?? null },
      })
    total += amount
  }
  return total
}
