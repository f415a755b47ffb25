// What one signature spends of one limit's asset, read from the transaction itself: wei of every
// call and the most the signer can pay in fees, ERC-20 `transfer`, `transferFrom`, `approve` and
// `increaseAllowance` calldata, lamports of System Program transfers and the fee payer's fee, SPL
// Token `Transfer`, `TransferChecked`, `Approve` and `ApproveChecked` instructions. Where a
// contract is the chain's native coin (Celo, Moonbeam, Evmos, Polygon PoS:
// `nativeTokenContracts.ts`), a native limit and an ERC-20 limit on that contract count the same
// coin, each what the other's path moves too. Under a native limit, a call with calldata is signed
// only on a chain known to move its native coin only as a call's value (`valueOnlyChains.ts`);
// under an ERC-20 limit, a call sending value is signed only where the chain is known (on that
// list, or with its coin's contract in the table), since elsewhere the token may be the coin. What
// cannot be read under a limit is refused, never let through.
import { ed25519 } from '@noble/curves/ed25519.js'
import { bytesToNumberLE } from '@noble/curves/utils.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { concatBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { base58 } from '@scure/base'
import { PermissionError } from '../kernel/base/errors.ts'
import type { SolanaPolicyTransaction } from '../kernel/crypto/signTransaction.ts'
import {
  COMPUTE_BUDGET_PROGRAM,
  instructionBytes,
  readComputeBudget,
  solanaFeeBound,
} from '../kernel/crypto/solanaFees.ts'
import type { SpendCall, SpendDescription } from '../kernel/spending.ts'
import type { SpendingLimitRow } from '../kernel/store/model.ts'
import { NATIVE_TOKEN_CONTRACTS, type NativeTokenContract } from './nativeTokenContracts.ts'
import { VALUE_ONLY_CHAINS } from './valueOnlyChains.ts'

/** ERC-20 selectors whose amount a limit counts: the destination is the recipient or the spender. */
const ERC20 = {
  a9059cbb: { name: 'transfer', destination: 0, amount: 1, words: 2 },
  '23b872dd': { name: 'transferFrom', destination: 1, amount: 2, words: 3 },
  '095ea7b3': { name: 'approve', destination: 0, amount: 1, words: 2 },
  '39509351': { name: 'increaseAllowance', destination: 0, amount: 1, words: 2 },
} as const

const SYSTEM_PROGRAM = '11111111111111111111111111111111'
/**
 * Programs that move no lamports of the signer by themselves: compute budget (the priority fee it
 * sets is counted with the fee, `solanaFee`), memo (v1 and v2).
 */
const HARMLESS_PROGRAMS = new Set([
  COMPUTE_BUDGET_PROGRAM,
  'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr',
  'Memo1UhkJRfHyvLMcVucJwxXeuD3j5oJwL4pdG5JNo',
])

/** An EVM address as the limits compare it; Solana's base58 is case-sensitive and kept. */
export const normalAddress = (address: string) => (/^0x/i.test(address) ? address.toLowerCase() : address)

/** One amount a signature spends of a limit's asset, and where it goes. */
interface Outflow {
  amount: bigint
  destination: string | undefined
  /** The network's fee: it goes to no address, so a limit's allow-list does not apply to it. */
  fee?: true
}

const undecodable = (limit: SpendingLimitRow, reason: string) =>
  new PermissionError({
    code: 'SPEND_UNDECODABLE',
    message: `spending limit ${limit.id} (${limit.name}) covers this signer, and ${reason}: the service cannot tell what it spends, so it does not sign it while the limit is in force`,
    extra: { spendingLimitId: limit.id },
  })

const word = (data: string, index: number) => data.slice(8 + 64 * index, 8 + 64 * (index + 1))

/** The outflows of one ERC-20 call to `token`, or a refusal for calldata it cannot read. */
function erc20Outflow(limit: SpendingLimitRow, token: string, data: string): Outflow[] {
  const hex = data.replace(/^0x/i, '').toLowerCase()
  if (hex.length === 0) return []
  const selector = hex.slice(0, 8) as keyof typeof ERC20
  const shape = ERC20[selector]
  if (!shape)
    throw undecodable(
      limit,
      `its call to the token ${token} has the selector 0x${hex.slice(0, 8)}, which is not transfer, transferFrom, approve or increaseAllowance`,
    )
  if (hex.length !== 8 + 64 * shape.words || !/^[0-9a-f]*$/.test(hex))
    throw undecodable(limit, `its ${shape.name} calldata is not ${shape.words} ABI words`)
  const destination = `0x${word(hex, shape.destination).slice(24)}`
  return [{ amount: BigInt(`0x${word(hex, shape.amount)}`), destination }]
}

/** Calldata that is not empty (`0x` and `` are none). */
const hasCalldata = (data: string) => !/^(0x)?$/i.test(data)

/**
 * The outflows of `token` (an ERC-20, lower case) in `calls`: each call to it decoded. A call into
 * another contract can move the token through an allowance the account gave it before the limit
 * saw it (Permit2, a router: `transferFrom` by the spender), or give one (Permit2's own
 * `approve`); the service cannot tell how much, so it is refused. A plain transfer of the chain's
 * unit (no calldata) and a contract creation (its address holds no allowance it did not count)
 * move none of the token by themselves.
 */
function tokenOutflows(limit: SpendingLimitRow, calls: SpendCall[], token: string, what: string): Outflow[] {
  return calls.flatMap((call) => {
    if (call.to && normalAddress(call.to) === token) return erc20Outflow(limit, token, call.data)
    if (call.to && hasCalldata(call.data))
      throw undecodable(
        limit,
        hasCalldata(call.to)
          ? `its call to ${call.to} is not to the token ${what}: it could move the token through an allowance given to that contract`
          : `it creates a contract, whose init code the limit on the token ${what} does not read`,
      )
    return []
  })
}

/**
 * Where a call's value goes: its target, but for a call to a contract that forwards the value it
 * is sent (Polygon's MRC20 `transfer(to, value)`), the recipient it names.
 */
function valueDestination(call: SpendCall, coin: NativeTokenContract | undefined): string | undefined {
  const to = call.to && normalAddress(call.to)
  if (coin?.moves !== 'value' || to !== coin.contract) return to
  const hex = call.data.replace(/^0x/i, '').toLowerCase()
  const transfer = ERC20.a9059cbb
  return hex.startsWith('a9059cbb') && hex.length === 8 + 64 * transfer.words
    ? `0x${word(hex, transfer.destination).slice(24)}`
    : to
}

/**
 * Refuses, under a native limit (or an ERC-20 limit on a contract that is the coin), a call that
 * runs code with calldata (into a contract, or a creation's init code) on a chain not known to
 * move its native coin only as a call's value (`valueOnlyChains.ts`): there a precompile may move
 * the caller's balance with value 0 (Sei's IBC `transfer`, Cosmos EVM's native WERC20), which the
 * value does not show. A plain transfer (no calldata) is counted as everywhere. `more`: the chains the
 * operator adds (`[limits] value_only_chains`).
 */
function valueOnlyCheck(limit: SpendingLimitRow, calls: SpendCall[], more: ReadonlySet<string>): void {
  const { caip2 } = limit.asset
  if (Object.hasOwn(VALUE_ONLY_CHAINS, caip2) || more.has(caip2)) return
  const call = calls.find((c) => hasCalldata(c.data))
  if (!call) return
  // A creation has no destination (the decoder gives `0x` for it).
  const target = call.to !== undefined && hasCalldata(call.to) ? call.to : undefined
  throw undecodable(
    limit,
    `${target ? `its call to ${target} carries calldata` : 'it creates a contract'} on ${caip2}, a chain the service does not know to move its native coin only as a call's value: a precompile or system contract there may move the caller's balance with none sent (as Sei's IBC and Cosmos EVM's native-coin ERC-20 precompiles do), so under a native limit of that chain only plain transfers are signed (docs/spending-limits.md lists the chains where calls into contracts are)`,
  )
}

/**
 * Refuses, under an ERC-20 limit of a chain the service knows nothing of (on neither the
 * service's value-only list nor the operator's, with no contract in `nativeTokenContracts.ts`), a
 * call that sends value. On some chains the native coin is itself an ERC-20 (Evmos' WEVMOS,
 * Metis' METIS at 0xDeadDeAd…0000): its balance is the native balance, and a plain transfer moves
 * it without a call to the token. Where the chain is not known, the limited contract may be that
 * coin, so its value cannot be left uncounted.
 */
function unknownCoinCheck(
  limit: SpendingLimitRow,
  calls: SpendCall[],
  contract: string,
  more: ReadonlySet<string>,
): void {
  const { caip2 } = limit.asset
  if (Object.hasOwn(VALUE_ONLY_CHAINS, caip2) || more.has(caip2)) return
  const call = calls.find((c) => c.value > 0n)
  if (!call) return
  const target =
    call.to !== undefined && hasCalldata(call.to) ? `its call to ${call.to}` : 'its contract creation'
  throw undecodable(
    limit,
    `${target} sends ${call.value} wei of the native coin of ${caip2}, a chain the service does not know to move its native coin only as a call's value, nor which contract is that coin: on some chains the coin is itself an ERC-20 (Evmos' WEVMOS, Metis' METIS), whose balance a plain transfer moves without a call to the token, so the limited token ${contract} may be the coin and this value its own. Under an ERC-20 limit of that chain only calls without value are signed, unless the operator, having checked the chain, names it in [limits] value_only_chains`,
  )
}

/**
 * The outflows of an EVM signature by `signer` (its 0x address, lower case) under `limit` (nothing
 * when the limit is of another chain).
 */
function evmOutflows(
  limit: SpendingLimitRow,
  spend: Extract<SpendDescription, { kind: 'evm' }>,
  signer: string | undefined,
  valueOnly: ReadonlySet<string>,
): Outflow[] {
  // A transaction without a chain id is valid on every chain: every EVM limit counts it.
  if (
    spend.caip2 === undefined ? !limit.asset.caip2.startsWith('eip155:') : limit.asset.caip2 !== spend.caip2
  )
    return []
  if (spend.delegates)
    throw undecodable(limit, 'the transaction carries an EIP-7702 authorization (code for the account)')
  if (signer === undefined) throw undecodable(limit, 'the signing key has no EVM address')
  const self = normalAddress(signer)
  // An account with an EIP-7702 delegation runs the delegate's code when it calls itself: the
  // Latchkey delegate's `execute` (ERC-7821 batch mode, allowed when the caller is the account)
  // makes any calls with any value, which the top-level value does not show. The service installs
  // that delegate for sponsored and batched sends and it stays, and whether an account has code
  // when a signed transaction is mined cannot be known when it is signed: such a call is refused,
  // not decoded. A call to itself without calldata (a transfer to itself, a nonce's cancellation)
  // runs no function and is counted as any transfer.
  for (const call of spend.calls)
    if (call.to && normalAddress(call.to) === self && hasCalldata(call.data))
      throw undecodable(
        limit,
        `it calls the signing account itself (${call.to}) with calldata: an account with an EIP-7702 delegation runs its delegate's code (an ERC-7821 execute can make any calls with any value)`,
      )
  const { asset } = limit
  const native = asset.type === 'SPENDING_LIMIT_ASSET_NATIVE'
  if (!native && asset.type !== 'SPENDING_LIMIT_ASSET_ERC20') return []
  // The chain's native coin, when a contract is it too: a native limit, or an ERC-20 limit on
  // that contract, counts the coin whichever way it leaves.
  const coin = NATIVE_TOKEN_CONTRACTS[asset.caip2]
  if (!native && normalAddress(asset.contract) !== coin?.contract) {
    if (!coin) unknownCoinCheck(limit, spend.calls, asset.contract, valueOnly)
    return tokenOutflows(limit, spend.calls, normalAddress(asset.contract), asset.contract)
  }
  // Where an ERC-20 is the coin, calls into other contracts are refused below (`tokenOutflows`).
  if (coin?.moves !== 'erc20') valueOnlyCheck(limit, spend.calls, valueOnly)
  const values = spend.calls
    .filter((call) => call.value > 0n)
    .map((call) => ({ amount: call.value, destination: valueDestination(call, coin) }))
  // What the signer pays for gas is the chain's native unit leaving the account too, and on an
  // OP Stack or Scroll chain so is its L1 data fee, and on an OP Stack chain its operator fee
  // (where the service could price them: `l1Fees`). A native limit counts them; an ERC-20 limit on the coin's contract counts what the calls move (the fee stays
  // the native limit's: the fee's settlement and pricing go by native limits).
  const fee = native ? (spend.fee ?? 0n) + (spend.l1Fees?.[limit.asset.caip2] ?? 0n) : 0n
  const fees = fee > 0n ? [{ amount: fee, destination: undefined, fee: true as const }] : []
  // A contract that moves only the value it is sent (Polygon's MRC20) moves nothing more; an
  // ERC-20 that is the coin moves it with no value, and so does a contract the account gave an
  // allowance on it, as under any ERC-20 limit.
  if (coin?.moves !== 'erc20') return [...values, ...fees]
  return [
    ...values,
    ...tokenOutflows(limit, spend.calls, coin.contract, `${coin.contract} (the chain's native coin)`),
    ...fees,
  ]
}

/** The outflows of a Solana signature under `limit`: lamports or one SPL token's units. */
function solanaOutflows(
  limit: SpendingLimitRow,
  spend: Extract<SpendDescription, { kind: 'solana' }>,
  signer: string | undefined,
): Outflow[] {
  if (!limit.asset.caip2.startsWith('solana:')) return []
  if (signer === undefined) throw undecodable(limit, 'the signing key has no Solana address')
  if (limit.asset.type === 'SPENDING_LIMIT_ASSET_SPL')
    return splOutflows(limit, spend.tx, signer, limit.asset.mint)
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
  const outflows: Outflow[] = tx.transfers
    .filter((transfer) => transfer.from === signer)
    .map((transfer) => ({ amount: BigInt(transfer.amount), destination: transfer.to }))
  // The fee payer (the first account) pays the fee: the signer, unless a sponsor pays it.
  if (!spend.sponsored && tx.account_keys[0] === signer)
    outflows.push({ amount: solanaFee(limit, tx), destination: undefined, fee: true })
  return outflows
}

/**
 * The most a Solana transaction costs its fee payer, lamports (`solanaFeeBound`). A Compute Budget
 * instruction it cannot read is refused: it could add a fee this does not see.
 */
function solanaFee(limit: SpendingLimitRow, tx: SolanaPolicyTransaction): bigint {
  const budget = readComputeBudget(tx.instructions)
  if ('unreadable' in budget)
    throw undecodable(
      limit,
      `instruction ${budget.unreadable} is a Compute Budget instruction other than RequestHeapFrame, SetComputeUnitLimit, SetComputeUnitPrice or SetLoadedAccountsDataSizeLimit`,
    )
  return solanaFeeBound(tx.signers.length, budget, tx.instructions)
}

/** The Token program and Token-2022: their transfer and approve instructions share a layout. */
const TOKEN_PROGRAMS = new Set([
  'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
  'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb',
])
const ASSOCIATED_TOKEN_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL'
/**
 * Programs that move none of the signer's tokens by themselves under an SPL limit: the harmless
 * ones and the System Program (lamports are another limit's asset, and a transfer of them is
 * the policy's to allow). The Associated Token Account program moves none of them either, but its
 * creations spend the payer's lamports on rent: `associatedAccountCheck`.
 */
const HARMLESS_FOR_TOKENS = new Set([...HARMLESS_PROGRAMS, SYSTEM_PROGRAM])

/**
 * The Token programs' instructions a limit counts, by their first data byte: the amount is the
 * next 8 bytes (little-endian); `mint` and `to` are account indexes (the unchecked ones name no mint).
 */
const TOKEN_INSTRUCTIONS: Record<number, { name: string; bytes: number; mint?: number; to: number }> = {
  3: { name: 'Transfer', bytes: 9, to: 1 },
  4: { name: 'Approve', bytes: 9, to: 1 },
  12: { name: 'TransferChecked', bytes: 10, mint: 1, to: 2 },
  13: { name: 'ApproveChecked', bytes: 10, mint: 1, to: 2 },
}

/**
 * The associated token account of `owner` for `mint` under `tokenProgram` (base58): the program
 * address the Associated Token Account program derives, the first bump from 255 down whose hash
 * is off the ed25519 curve.
 */
export function associatedTokenAccount(owner: string, mint: string, tokenProgram: string): string {
  const seeds = concatBytes(base58.decode(owner), base58.decode(tokenProgram), base58.decode(mint))
  const suffix = concatBytes(base58.decode(ASSOCIATED_TOKEN_PROGRAM), utf8ToBytes('ProgramDerivedAddress'))
  for (let bump = 255; bump >= 0; bump--) {
    const hash = sha256(concatBytes(seeds, new Uint8Array([bump]), suffix))
    try {
      ed25519.Point.fromBytes(hash)
    } catch {
      return base58.encode(hash)
    }
  }
  throw new Error('no program address for these seeds')
}

/**
 * Refuses an Associated Token Account instruction the signer must not sign under `limit`, an SPL
 * limit on `mint`. `Create` and `CreateIdempotent` (data empty, `00`, `01`; accounts: payer,
 * account, owner, mint) move the payer's lamports, the new account's rent (about 0.002 SOL), into
 * an account its owner can close and keep: a policy that allows the program for token transfers
 * (to create a recipient's account) let a signer pay that rent out to accounts a thief owns, one
 * per fresh mint, unbounded, and no SPL limit counted it. Paid by the signer, a creation is signed
 * for the signer's own account (its rent stays the signer's) or for an allow-list address's
 * account of the limit's mint (a recipient the limit's owner named, once per account); paid by
 * another signer, it costs the signer nothing. Either way, paid by the signer, it is a real token
 * account: the Token or Token-2022 program, the System Program, the derived address (else the
 * program would size and hand the account to any program the caller names). `RecoverNested` (`02`) moves a nested account's
 * tokens and lamports to its owner, who signs it. Anything else the program would refuse.
 */
function associatedAccountCheck(
  limit: SpendingLimitRow,
  instruction: SolanaPolicyTransaction['instructions'][number],
  index: number,
  { signer, mint }: { signer: string; mint: string },
): void {
  if (instruction.data === '02') return
  if (!['', '00', '01'].includes(instruction.data))
    throw undecodable(
      limit,
      `instruction ${index} is an Associated Token Account instruction other than Create, CreateIdempotent or RecoverNested`,
    )
  const [payer, account, owner, created, system, tokenProgram] = instruction.accounts
  if (payer !== signer) return
  // The program takes the new account's size from the token program it is given (account 5) and
  // charges the payer its rent, then hands the account to that program: any program but Token or
  // Token-2022 could ask for 10 MiB (73 SOL) and keep it. So a creation the signer pays is of a
  // real token account: the token program, the System Program and the address it derives.
  if (
    tokenProgram === undefined ||
    !TOKEN_PROGRAMS.has(tokenProgram) ||
    system !== SYSTEM_PROGRAM ||
    owner === undefined ||
    created === undefined ||
    owner.includes('#') ||
    created.includes('#') ||
    account !== associatedTokenAccount(owner, created, tokenProgram)
  )
    throw undecodable(
      limit,
      `instruction ${index} creates an account paid by the signer that is not the associated token account of its owner and mint under the Token or Token-2022 program`,
    )
  if (owner === signer) return
  if (owner !== undefined && created === mint && limit.allowedDestinations.includes(owner)) return
  const why =
    limit.allowedDestinations.length === 0
      ? 'the limit has no allow-list'
      : created !== mint
        ? `it is not an account of the limit's mint ${mint}`
        : `${owner} is not on the limit's allow-list`
  throw new PermissionError({
    code: 'SPEND_UNDECODABLE',
    message: `spending limit ${limit.id} (${limit.name}) covers this signer and counts the token ${mint}, not lamports; instruction ${index} creates a token account of ${created ?? 'no mint'} for ${owner ?? 'no owner'} paid by the signer, whose rent would go uncounted to an account that owner can close and keep, and ${why}. Under an SPL limit the signer pays only for its own token accounts and for the allow-list's addresses' accounts of the limit's mint: let the recipient create its account, or another signer pay for it`,
    extra: { spendingLimitId: limit.id },
  })
}

/**
 * The outflows of the SPL token `mint` in a Solana transaction signed by `signer`. Counted: every
 * `TransferChecked` and `ApproveChecked` of the mint, and every `Transfer` and `Approve` from the
 * signer's associated account of it. Refused: an unchecked one from any other account (its mint
 * cannot be told from the transaction), an account loaded from a lookup table where the mint or
 * source is read, any other instruction of a Token program, any other program (it could move
 * the tokens through the signer's authority), and a token account the signer would pay for
 * someone else off the allow-list (`associatedAccountCheck`). The destination of a transfer is the
 * account it credits, or the owner on the allow-list whose associated account that is.
 */
function splOutflows(
  limit: SpendingLimitRow,
  tx: SolanaPolicyTransaction,
  signer: string,
  mint: string,
): Outflow[] {
  const outflows: Outflow[] = []
  for (const [index, instruction] of tx.instructions.entries()) {
    const program = instruction.program_key
    if (HARMLESS_FOR_TOKENS.has(program)) continue
    if (program === ASSOCIATED_TOKEN_PROGRAM) {
      associatedAccountCheck(limit, instruction, index, { signer, mint })
      continue
    }
    if (!TOKEN_PROGRAMS.has(program))
      throw undecodable(
        limit,
        `instruction ${index} calls the program ${program}, which could move the token`,
      )
    const data = instructionBytes(instruction.data)
    const shape = TOKEN_INSTRUCTIONS[data[0] ?? -1]
    if (!shape || data.length !== shape.bytes || instruction.accounts.length <= shape.to)
      throw undecodable(
        limit,
        `instruction ${index} is a Token program instruction other than Transfer, TransferChecked, Approve or ApproveChecked`,
      )
    const account = (at: number) => {
      const key = instruction.accounts[at]!
      if (key.includes('#'))
        throw undecodable(
          limit,
          `instruction ${index} (${shape.name}) names an account loaded from a lookup table`,
        )
      return key
    }
    if (shape.mint !== undefined) {
      if (account(shape.mint) !== mint) continue
    } else if (account(0) !== associatedTokenAccount(signer, mint, program))
      throw undecodable(
        limit,
        `instruction ${index} is a ${shape.name} from ${account(0)}, which is not the signer's associated account of ${mint}, and names no mint: send it as ${shape.name}Checked`,
      )
    const to = instruction.accounts[shape.to]!
    const owner = limit.allowedDestinations.find(
      (allowed) => !to.includes('#') && associatedTokenAccount(allowed, mint, program) === to,
    )
    outflows.push({ amount: bytesToNumberLE(data.subarray(1, 9)), destination: owner ?? to })
  }
  return outflows
}

/**
 * What a signature by `signer` (the account's address on the spend's chain: its 0x address, its
 * base58 Solana key) spends of `limit`'s asset (`total`: 0 when it spends none, another
 * chain, a call that moves nothing), and how much of it is the most its fee can cost (`fee`).
 * Refuses what it cannot read and a destination off the allow-list. `valueOnly`: the EVM chains the
 * operator adds to the service's own whose coin moves only as value (`valueOnlyChains.ts`).
 */
export function spendOf(
  limit: SpendingLimitRow,
  spend: SpendDescription,
  signer: string | undefined,
  valueOnly: ReadonlySet<string> = new Set(),
): { total: bigint; fee: bigint } {
  if (spend.kind === 'opaque')
    throw undecodable(
      limit,
      `${spend.what} is not a transaction; sign transactions with sign_transaction instead`,
    )
  const outflows =
    spend.kind === 'evm' ? evmOutflows(limit, spend, signer, valueOnly) : solanaOutflows(limit, spend, signer)
  let total = 0n
  let fees = 0n
  for (const { amount, destination, fee } of outflows) {
    if (amount === 0n) continue
    if (fee) fees += amount
    if (
      !fee &&
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
  return { total, fee: fees }
}
