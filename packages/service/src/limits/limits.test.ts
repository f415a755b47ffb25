import { type Address, createNoopSigner, type Instruction } from '@solana/kit'
import { getTransferSolInstruction } from '@solana-program/system'
import {
  AuthorityType,
  findAssociatedTokenPda,
  getApproveCheckedInstruction,
  getCreateAssociatedTokenIdempotentInstruction,
  getSetAuthorityInstruction,
  getTransferCheckedInstruction,
  getTransferInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token'
import { encodeFunctionData, erc20Abi, type Hex, serializeTransaction } from 'viem'
import { describe, expect, it } from 'vitest'
import { agentUser } from '../../test/limits/agentGrant.ts'
import { solanaTransaction } from '../../test/support/solanaTransaction.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  type Harness,
  type Json,
  resultOf,
  SOLANA_ACCOUNT,
  type TestKey,
  testKey,
} from '../testing/harness.ts'
import { EXACT_ENTRIES } from './spendGuard.ts'
import { entriesOf, logOf } from './spendLog.ts'
import { associatedTokenAccount } from './spendOf.ts'

const DEAD = '0x000000000000000000000000000000000000dead'
const FRIEND = '0x00000000000000000000000000000000000f00d5'
const TOKEN = '0x1111111111111111111111111111111111111111'
const HOUR = 3_600_000
const DAY = 24 * HOUR

let nonce = 0
/**
 * An unsigned EIP-1559 transaction on `chainId` (default 1), paying no fee unless `maxFeePerGas`
 * says (a native limit counts its value and the most its 100,000 gas can cost).
 */
const tx = (
  to: string,
  value: bigint,
  options: { data?: Hex; chainId?: number; maxFeePerGas?: bigint } = {},
) =>
  serializeTransaction({
    type: 'eip1559',
    chainId: options.chainId ?? 1,
    nonce: nonce++,
    maxFeePerGas: options.maxFeePerGas ?? 0n,
    maxPriorityFeePerGas: options.maxFeePerGas ?? 0n,
    gas: 100_000n,
    to: to as Hex,
    value,
    ...(options.data ? { data: options.data } : {}),
  })

const transferData = (to: string, amount: bigint) =>
  encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to as Hex, amount] })

async function setup(options: { users?: number } = {}) {
  const h = await createHarness()
  const sub = await h.createSubOrganization({
    users: options.users ?? 1,
    wallet: { walletName: 'W', accounts: [ETHEREUM_ACCOUNT, SOLANA_ACCOUNT] },
  })
  const as = { as: sub.keys[0]!, organizationId: sub.organizationId }
  const eth = sub.addresses![0]!
  const sol = sub.addresses![1]! as Address
  const submit = (path: Parameters<Harness['submit']>[0], parameters: Json, by: TestKey = sub.keys[0]!) => {
    h.clock.advance(1)
    return h.submit(path, parameters, { as: by, organizationId: sub.organizationId })
  }
  const limit = async (parameters: Json) =>
    resultOf(
      'latchkey_create_spending_limit',
      await submit('latchkey_create_spending_limit', {
        spendingLimitName: 'daily',
        scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: eth },
        window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
        asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:1' },
        amount: '10',
        ...parameters,
      }),
    ).spendingLimitId as string
  const sign = (unsignedTransaction: string, by?: TestKey, signWith = eth) =>
    submit(
      'sign_transaction',
      {
        signWith,
        type: signWith === eth ? 'TRANSACTION_TYPE_ETHEREUM' : 'TRANSACTION_TYPE_SOLANA',
        unsignedTransaction,
      },
      by,
    )
  const list = async () =>
    (await h.query('latchkey_list_spending_limits', {}, as)).body.spendingLimits as Json[]
  return { h, sub, as, eth, sol, submit, limit, sign, list }
}

const refusal = (reply: { status: number; body: Json }) => ({
  status: reply.status,
  errorCode: reply.body?.details?.errorCode,
})

describe('spending limits', () => {
  it('creates, lists with its use, updates and deletes a limit; every bad field is a 400 naming it', async () => {
    const { submit, limit, list, sign, eth } = await setup()
    const id = await limit({ allowedDestinations: [DEAD.toUpperCase().replace('0X', '0x')] })
    expect(await list()).toEqual([
      expect.objectContaining({
        spendingLimitId: id,
        spendingLimitName: 'daily',
        scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: eth.toLowerCase() },
        amount: '10',
        allowedDestinations: [DEAD],
        used: '0',
        remaining: '10',
      }),
    ])
    expect((await sign(tx(DEAD, 4n))).status).toBe(200)
    expect(await list()).toEqual([expect.objectContaining({ used: '4', remaining: '6' })])
    const updated = await submit('latchkey_update_spending_limit', { spendingLimitId: id, amount: '20' })
    expect(resultOf('latchkey_update_spending_limit', updated)).toEqual({ spendingLimitId: id })
    expect(await list()).toEqual([expect.objectContaining({ amount: '20', used: '4', remaining: '16' })])
    resultOf(
      'latchkey_delete_spending_limit',
      await submit('latchkey_delete_spending_limit', { spendingLimitId: id }),
    )
    expect(await list()).toEqual([])
    expect(refusal(await submit('latchkey_delete_spending_limit', { spendingLimitId: id }))).toEqual({
      status: 404,
      errorCode: 'SPENDING_LIMIT_NOT_FOUND',
    })

    const base = {
      spendingLimitName: 'x',
      scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: eth },
      window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
      asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:1' },
      amount: '10',
    }
    for (const [change, field] of [
      [{ amount: '-1' }, 'parameters.amount'],
      [{ amount: '1.5' }, 'parameters.amount'],
      [{ amount: (2n ** 256n).toString() }, 'parameters.amount'],
      [
        { window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_YEAR' } },
        'parameters.window.period',
      ],
      [
        { window: { type: 'SPENDING_LIMIT_WINDOW_FIXED', period: 'PERIOD_DAY' } },
        'parameters.window.startTimestampMs',
      ],
      [{ asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eth' } }, 'parameters.asset.caip2'],
      [
        { asset: { type: 'SPENDING_LIMIT_ASSET_ERC20', caip2: 'eip155:1', contract: '0x12' } },
        'parameters.asset.contract',
      ],
      [{ scope: { type: 'SPENDING_LIMIT_SCOPE_USER' } }, 'parameters.scope.userId'],
      [{ scope: { type: 'SPENDING_LIMIT_SCOPE_USER', userId: 'nobody' } }, 'parameters.scope.userId'],
      [{ scope: { type: 'SPENDING_LIMIT_SCOPE_API_KEY', apiKeyId: 'nokey' } }, 'parameters.scope.apiKeyId'],
      [{ scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: DEAD } }, 'parameters.scope.address'],
      [{ allowedDestinations: ['nope'] }, 'parameters.allowedDestinations[0]'],
      [{ spendingLimitName: '' }, 'parameters.spendingLimitName'],
    ] as const) {
      const reply = await submit('latchkey_create_spending_limit', { ...base, ...change })
      expect([reply.status, reply.body.details?.field], JSON.stringify(reply.body)).toEqual([
        field.startsWith('parameters.scope.') && !field.endsWith('userId"') && reply.status === 404
          ? 404
          : 400,
        field,
      ])
      expect(reply.status).toBeLessThan(500)
    }
  })

  it('counts wei per window: exactly the limit is signed, then refused with the limit, used, remaining and when it frees', async () => {
    const { h, limit, sign } = await setup()
    const id = await limit({})
    const start = h.clock.now()
    for (const value of [3n, 3n, 4n]) expect((await sign(tx(DEAD, value))).status).toBe(200)
    const over = await sign(tx(DEAD, 1n))
    expect(over.status).toBe(429)
    expect(over.body.details).toMatchObject({
      errorCode: 'SPENDING_LIMIT_EXCEEDED',
      spendingLimitId: id,
      limit: '10',
      used: '10',
      remaining: '0',
      requested: '1',
    })
    // The first spend (3) frees one day after it was signed: the rolling window's exact edge.
    const firstAt = Number(over.body.details.freesAtTimestampMs)
    expect(firstAt - start).toBeGreaterThanOrEqual(DAY)
    expect(firstAt - start).toBeLessThan(DAY + 10)
    expect(over.body.message).toContain(`spending limit ${id}`)
    // A spend on another chain, or worth nothing, is not this limit's.
    expect((await sign(tx(DEAD, 5n, { chainId: 8453 }))).status).toBe(200)
    expect((await sign(tx(DEAD, 0n))).status).toBe(200)
    // One millisecond before the edge it is still refused; at the edge it passes (`sign` advances 1 ms).
    h.clock.set(firstAt - 2)
    expect(refusal(await sign(tx(DEAD, 1n)))).toEqual({ status: 429, errorCode: 'SPENDING_LIMIT_EXCEEDED' })
    h.clock.set(firstAt - 1)
    expect((await sign(tx(DEAD, 3n))).status).toBe(200)
    // A millisecond later the second spend (3) has left too: 4 + 3 used, so 4 more is over.
    expect(refusal(await sign(tx(DEAD, 4n)))).toEqual({ status: 429, errorCode: 'SPENDING_LIMIT_EXCEEDED' })
    // More than the whole limit never fits: no time is promised.
    const never = await sign(tx(DEAD, 11n))
    expect(never.body.details.freesAtTimestampMs).toBeUndefined()
  })

  it('a fixed window resets at its period boundary, not a rolling day after each spend', async () => {
    const { h, limit, sign, list } = await setup()
    const origin = h.clock.now() - 10 * HOUR
    await limit({
      window: { type: 'SPENDING_LIMIT_WINDOW_FIXED', period: 'PERIOD_DAY', startTimestampMs: String(origin) },
    })
    expect((await sign(tx(DEAD, 10n))).status).toBe(200)
    const over = await sign(tx(DEAD, 1n))
    expect(over.body.details).toMatchObject({
      errorCode: 'SPENDING_LIMIT_EXCEEDED',
      freesAtTimestampMs: String(origin + DAY),
    })
    h.clock.set(origin + DAY - 2)
    expect(refusal(await sign(tx(DEAD, 1n)))).toEqual({ status: 429, errorCode: 'SPENDING_LIMIT_EXCEEDED' })
    h.clock.set(origin + DAY)
    expect((await list())[0]).toMatchObject({ used: '0', remaining: '10' })
    expect((await sign(tx(DEAD, 10n))).status).toBe(200)
  })

  it('a fixed window whose start is still to come holds before it: the window ending at the start counts every spend', async () => {
    const { h, limit, sign, list } = await setup()
    // "10 a day, days from tonight's midnight", set in the afternoon.
    const origin = h.clock.now() + 10 * HOUR
    await limit({
      window: { type: 'SPENDING_LIMIT_WINDOW_FIXED', period: 'PERIOD_DAY', startTimestampMs: String(origin) },
    })
    expect((await sign(tx(DEAD, 6n))).status).toBe(200)
    expect((await sign(tx(DEAD, 4n))).status).toBe(200)
    expect(refusal(await sign(tx(DEAD, 1n)))).toEqual({ status: 429, errorCode: 'SPENDING_LIMIT_EXCEEDED' })
    expect((await list())[0]).toMatchObject({ used: '10', remaining: '0' })
    // The first window starts at the origin, with nothing in it.
    // (Each request moves the clock a millisecond: this one is signed at the window's last.)
    h.clock.set(origin - 2)
    expect(refusal(await sign(tx(DEAD, 1n)))).toEqual({ status: 429, errorCode: 'SPENDING_LIMIT_EXCEEDED' })
    h.clock.set(origin)
    expect((await list())[0]).toMatchObject({ used: '0', remaining: '10' })
    expect((await sign(tx(DEAD, 10n))).status).toBe(200)
  })

  it('reads ERC-20 transfer, transferFrom, approve and increaseAllowance; refuses unknown calldata to the token, and calls into other contracts', async () => {
    const { limit, sign, list } = await setup()
    await limit({
      asset: { type: 'SPENDING_LIMIT_ASSET_ERC20', caip2: 'eip155:1', contract: TOKEN },
      amount: '100',
    })
    expect((await sign(tx(TOKEN, 0n, { data: transferData(DEAD, 40n) }))).status).toBe(200)
    const approve = encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [DEAD, 30n] })
    expect((await sign(tx(TOKEN, 0n, { data: approve }))).status).toBe(200)
    const from = encodeFunctionData({
      abi: erc20Abi,
      functionName: 'transferFrom',
      args: [FRIEND, DEAD, 20n],
    })
    expect((await sign(tx(TOKEN, 0n, { data: from }))).status).toBe(200)
    // increaseAllowance(address,uint256), not in the minimal ABI
    const increase =
      `0x39509351${DEAD.slice(2).padStart(64, '0')}${11n.toString(16).padStart(64, '0')}` as Hex
    expect(refusal(await sign(tx(TOKEN, 0n, { data: increase })))).toEqual({
      status: 429,
      errorCode: 'SPENDING_LIMIT_EXCEEDED',
    })
    expect((await list())[0]).toMatchObject({ used: '90', remaining: '10' })
    // Wei is not this token's.
    expect((await sign(tx(DEAD, 5n))).status).toBe(200)
    // A call into another contract could move the token through an allowance the account gave it
    // before (here Permit2's approve(token, spender, amount, expiration), which would let the
    // spender take it all through Permit2): refused, whatever the contract.
    const permit2Approve = `0x87517c45${[TOKEN, FRIEND].map((a) => a.slice(2).padStart(64, '0')).join('')}${'f'.repeat(64)}${'0'.repeat(64)}`
    const other = await sign(
      tx('0x000000000022d473030f116ddee9f6b43ac78ba3', 0n, { data: permit2Approve as Hex }),
    )
    expect(refusal(other)).toEqual({ status: 403, errorCode: 'SPEND_UNDECODABLE' })
    expect(other.body.message).toContain('could move the token through an allowance')
    expect(refusal(await sign(tx(DEAD, 0n, { data: transferData(DEAD, 1n) })))).toEqual({
      status: 403,
      errorCode: 'SPEND_UNDECODABLE',
    })
    // An unknown selector to the token is refused.
    const unknown = await sign(tx(TOKEN, 0n, { data: '0x12345678' }))
    expect(refusal(unknown)).toEqual({ status: 403, errorCode: 'SPEND_UNDECODABLE' })
    expect(unknown.body.message).toContain('0x12345678')
    const short = await sign(tx(TOKEN, 0n, { data: '0xa9059cbb00' }))
    expect(refusal(short)).toEqual({ status: 403, errorCode: 'SPEND_UNDECODABLE' })
  })

  it('refuses a destination off the allow-list, raw payloads and EIP-7702 authorizations while a limit covers the signer', async () => {
    const { limit, sign, submit, eth } = await setup()
    const raw = () =>
      submit('sign_raw_payload', {
        signWith: eth,
        payload: '00'.repeat(32),
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      })
    expect((await raw()).status).toBe(200)
    await limit({ allowedDestinations: [FRIEND] })
    expect((await sign(tx(FRIEND, 1n))).status).toBe(200)
    expect(refusal(await sign(tx(DEAD, 1n)))).toEqual({
      status: 403,
      errorCode: 'SPEND_DESTINATION_NOT_ALLOWED',
    })
    const refused = await raw()
    expect(refusal(refused)).toEqual({ status: 403, errorCode: 'SPEND_UNDECODABLE' })
    expect(refused.body.message).toMatch(/raw payload .* cannot tell what it spends/)
    const many = await submit('sign_raw_payloads', {
      signWith: eth,
      payloads: ['11'.repeat(32)],
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    })
    expect(refusal(many)).toEqual({ status: 403, errorCode: 'SPEND_UNDECODABLE' })
    const authorization = serializeTransaction({
      type: 'eip7702',
      chainId: 1,
      nonce: 9,
      maxFeePerGas: 2n,
      maxPriorityFeePerGas: 1n,
      gas: 100_000n,
      to: FRIEND,
      value: 0n,
      authorizationList: [{ address: DEAD, chainId: 1, nonce: 0, r: '0x01', s: '0x01', yParity: 0 }],
    })
    expect(refusal(await sign(authorization))).toEqual({ status: 403, errorCode: 'SPEND_UNDECODABLE' })
    expect(refusal(await sign('0xzz'))).toEqual({ status: 403, errorCode: 'SPEND_UNDECODABLE' })
  })

  it('counts Solana System transfers in lamports and refuses instructions of other programs', async () => {
    const { limit, sign, sol } = await setup()
    await limit({
      scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: sol },
      asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'solana:mainnet' },
      // Each transaction the account pays for also costs it 5,000 lamports of fee.
      amount: '11000',
    })
    const solTransfer = (amount: bigint, extra?: Instruction) =>
      solanaTransaction(sol, [
        getTransferSolInstruction({ source: createNoopSigner(sol), destination: DEAD_SOL, amount }),
        ...(extra ? [extra] : []),
      ])
    expect((await sign(solTransfer(600n), undefined, sol)).status).toBe(200)
    expect(refusal(await sign(solTransfer(600n), undefined, sol))).toEqual({
      status: 429,
      errorCode: 'SPENDING_LIMIT_EXCEEDED',
    })
    expect((await sign(solTransfer(400n), undefined, sol)).status).toBe(200)
    const other = {
      programAddress: 'Stake11111111111111111111111111111111111111' as Address,
      data: new Uint8Array([1]),
    }
    expect(refusal(await sign(solTransfer(0n, other), undefined, sol))).toEqual({
      status: 403,
      errorCode: 'SPEND_UNDECODABLE',
    })
  })

  it("counts what the signer can pay in fees: gas limit times fee cap, a Solana fee payer's signatures and priority fee; not the allow-list's business, and nothing when another account pays", async () => {
    const { limit, sign, sol, list } = await setup()
    // EVM: 100,000 gas at up to 10 wei each, and 5 wei of value, to an allowed address.
    await limit({ amount: '1000005', allowedDestinations: [FRIEND] })
    expect((await sign(tx(FRIEND, 5n, { maxFeePerGas: 10n }))).status).toBe(200)
    expect(await list()).toEqual([expect.objectContaining({ used: '1000005', remaining: '0' })])
    // Its fee alone, with no value at all, is refused once nothing is left.
    const feeOnly = await sign(tx(FRIEND, 0n, { maxFeePerGas: 1n }))
    expect(refusal(feeOnly)).toEqual({ status: 429, errorCode: 'SPENDING_LIMIT_EXCEEDED' })
    expect(feeOnly.body.details).toMatchObject({ requested: '100000', remaining: '0' })
    expect(feeOnly.body.message).toContain(
      "this signature spends 100000 (of which up to 100000 is the network's fee)",
    )

    // Solana: 5,000 lamports a signature, and the priority fee its Compute Budget instructions offer.
    const solId = await limit({
      spendingLimitName: 'sol',
      scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: sol },
      asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'solana:mainnet' },
      amount: '100000',
    })
    const budget = (kind: number, value: bigint, bytes: number) => ({
      programAddress: 'ComputeBudget111111111111111111111111111111' as Address,
      data: new Uint8Array([
        kind,
        ...Array.from({ length: bytes }, (_, i) => Number((value >> BigInt(8 * i)) & 0xffn)),
      ]),
    })
    const transfer = (amount: bigint) =>
      getTransferSolInstruction({ source: createNoopSigner(sol), destination: DEAD_SOL, amount })
    const usedOf = async () => (await list()).find((found) => found.spendingLimitId === solId)!.used
    // 200,000 units at 10,000 micro-lamports: 2,000 lamports, with the 5,000 and the 1,000 sent.
    const priced = solanaTransaction(sol, [budget(2, 200_000n, 4), budget(3, 10_000n, 8), transfer(1_000n)])
    expect((await sign(priced, undefined, sol)).status).toBe(200)
    expect(await usedOf()).toBe('8000')
    // A price without a unit limit is counted at the most units a transaction may use (1.4 million).
    expect((await sign(solanaTransaction(sol, [budget(3, 10_000n, 8)]), undefined, sol)).status).toBe(200)
    expect(await usedOf()).toBe(String(8_000 + 5_000 + 14_000))
    // Paid by another account, only what moves from the signer counts.
    const paidByOther = solanaTransaction(DEAD_SOL, [transfer(1_000n)])
    expect((await sign(paidByOther, undefined, sol)).status).toBe(200)
    expect(await usedOf()).toBe(String(27_000 + 1_000))
    // A Compute Budget instruction it cannot read is refused, not counted at nothing.
    expect(refusal(await sign(solanaTransaction(sol, [budget(9, 1n, 4)]), undefined, sol))).toEqual({
      status: 403,
      errorCode: 'SPEND_UNDECODABLE',
    })
  })

  it('counts an SPL token’s TransferChecked, ApproveChecked, and Transfer from the signer’s account of it; refuses what names no mint, other Token instructions and other programs', async () => {
    const { limit, sign, sol, list } = await setup()
    const id = await limit({
      scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: sol },
      asset: { type: 'SPENDING_LIMIT_ASSET_SPL', caip2: 'solana:mainnet', mint: USDC_MINT },
      amount: '1000',
      allowedDestinations: [FRIEND_SOL],
    })
    const signer = createNoopSigner(sol)
    const ata = async (owner: Address, mint: Address, tokenProgram: Address = TOKEN_PROGRAM_ADDRESS) => {
      const [address] = await findAssociatedTokenPda({ owner, mint, tokenProgram })
      // The service derives the same account without the library.
      expect(associatedTokenAccount(owner, mint, tokenProgram)).toBe(address)
      return address
    }
    const usdc = await ata(sol, USDC_MINT)
    const friendUsdc = await ata(FRIEND_SOL, USDC_MINT)
    const signSol = (...instructions: Instruction[]) =>
      sign(solanaTransaction(sol, instructions), undefined, sol)
    const checked = (amount: bigint, options: { mint?: Address; from?: Address; to?: Address } = {}) =>
      getTransferCheckedInstruction({
        source: options.from ?? usdc,
        mint: options.mint ?? USDC_MINT,
        destination: options.to ?? friendUsdc,
        authority: signer,
        amount,
        decimals: 6,
      })
    const createFriendAccount = getCreateAssociatedTokenIdempotentInstruction({
      payer: signer,
      ata: friendUsdc,
      owner: FRIEND_SOL,
      mint: USDC_MINT,
    })
    expect((await signSol(createFriendAccount, checked(600n))).status).toBe(200)
    expect(refusal(await signSol(checked(600n)))).toEqual({
      status: 429,
      errorCode: 'SPENDING_LIMIT_EXCEEDED',
    })
    const unchecked = (amount: bigint, source: Address) =>
      getTransferInstruction({ source, destination: friendUsdc, authority: signer, amount })
    expect((await signSol(unchecked(300n, usdc))).status).toBe(200)
    // Token-2022: the same layout; an approval counts, as an ERC-20 approve does.
    const token2022 = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb' as Address
    const approve = getApproveCheckedInstruction(
      {
        source: await ata(sol, USDC_MINT, token2022),
        mint: USDC_MINT,
        delegate: FRIEND_SOL,
        owner: signer,
        amount: 100n,
        decimals: 6,
      },
      { programAddress: token2022 },
    )
    expect((await signSol(approve)).status).toBe(200)
    expect(refusal(await signSol(checked(1n)))).toEqual({ status: 429, errorCode: 'SPENDING_LIMIT_EXCEEDED' })
    // Another mint's TransferChecked spends none of this one; an unchecked Transfer from another
    // account names no mint, so it is refused.
    const usdt = await ata(sol, USDT_MINT)
    expect(
      (await signSol(checked(5000n, { mint: USDT_MINT, from: usdt, to: await ata(FRIEND_SOL, USDT_MINT) })))
        .status,
    ).toBe(200)
    expect(refusal(await signSol(unchecked(1n, usdt)))).toEqual({
      status: 403,
      errorCode: 'SPEND_UNDECODABLE',
    })
    expect(refusal(await signSol(checked(1n, { to: await ata(DEAD_SOL, USDC_MINT) })))).toEqual({
      status: 403,
      errorCode: 'SPEND_DESTINATION_NOT_ALLOWED',
    })
    const giveAway = getSetAuthorityInstruction({
      owned: usdc,
      owner: signer,
      authorityType: AuthorityType.AccountOwner,
      newAuthority: DEAD_SOL,
    })
    expect(refusal(await signSol(giveAway))).toEqual({ status: 403, errorCode: 'SPEND_UNDECODABLE' })
    const stake = {
      programAddress: 'Stake11111111111111111111111111111111111111' as Address,
      data: new Uint8Array([1]),
    }
    expect(refusal(await signSol(stake))).toEqual({ status: 403, errorCode: 'SPEND_UNDECODABLE' })
    // A token account the signer pays for moves its lamports (the rent) to the account's owner,
    // who can close it: for a wallet off the allow-list, or another mint's account of a listed
    // one, it is refused; the signer's own account, or one another signer pays for, costs nothing.
    const create = (owner: Address, mint: Address, payer: Address = sol) =>
      getCreateAssociatedTokenIdempotentInstruction({
        payer: createNoopSigner(payer),
        ata: associatedTokenAccount(owner, mint, TOKEN_PROGRAM_ADDRESS) as Address,
        owner,
        mint,
      })
    expect(refusal(await signSol(create(DEAD_SOL, USDC_MINT)))).toEqual({
      status: 403,
      errorCode: 'SPEND_UNDECODABLE',
    })
    expect(refusal(await signSol(create(FRIEND_SOL, USDT_MINT)))).toEqual({
      status: 403,
      errorCode: 'SPEND_UNDECODABLE',
    })
    expect((await signSol(create(sol, USDT_MINT))).status).toBe(200)
    expect((await signSol(create(DEAD_SOL, USDT_MINT, DEAD_SOL))).status).toBe(200)
    // An instruction of the program past RecoverNested (2): none the service knows what it moves.
    const unknownAssociated = {
      programAddress: 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL' as Address,
      data: new Uint8Array([3]),
    }
    expect(refusal(await signSol(unknownAssociated))).toEqual({ status: 403, errorCode: 'SPEND_UNDECODABLE' })
    expect(await list()).toEqual([
      expect.objectContaining({ spendingLimitId: id, used: '1000', remaining: '0' }),
    ])
  })

  it('an SPL limit names a Solana cluster and a 32-byte mint', async () => {
    const { submit, sol } = await setup()
    const create = (asset: Json) =>
      submit('latchkey_create_spending_limit', {
        spendingLimitName: 'spl',
        scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: sol },
        window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
        asset,
        amount: '1',
      })
    const field = (reply: { status: number; body: Json }) => ({
      status: reply.status,
      field: reply.body?.details?.field,
    })
    expect(
      field(await create({ type: 'SPENDING_LIMIT_ASSET_SPL', caip2: 'eip155:1', mint: USDC_MINT })),
    ).toEqual({
      status: 400,
      field: 'parameters.asset.caip2',
    })
    expect(
      field(await create({ type: 'SPENDING_LIMIT_ASSET_SPL', caip2: 'solana:mainnet', mint: '1111' })),
    ).toEqual({
      status: 400,
      field: 'parameters.asset.mint',
    })
    expect(field(await create({ type: 'SPENDING_LIMIT_ASSET_SPL', caip2: 'solana:mainnet' }))).toEqual({
      status: 400,
      field: 'parameters.asset.mint',
    })
    expect(
      (await create({ type: 'SPENDING_LIMIT_ASSET_SPL', caip2: 'solana:mainnet', mint: USDC_MINT })).status,
    ).toBe(200)
  })

  it('a limit on a user or an API key covers what that caller signs, with any account', async () => {
    const { h, sub, limit, sign } = await setup({ users: 2 })
    const [, other] = sub.keys as [TestKey, TestKey]
    const keys = await h.query(
      'get_api_keys',
      { userId: sub.userIds[0] },
      { as: sub.keys[0]!, organizationId: sub.organizationId },
    )
    const apiKeyId = keys.body.apiKeys[0].apiKeyId as string
    await limit({ scope: { type: 'SPENDING_LIMIT_SCOPE_API_KEY', apiKeyId }, amount: '5' })
    expect((await sign(tx(DEAD, 5n))).status).toBe(200)
    expect(refusal(await sign(tx(DEAD, 1n)))).toEqual({ status: 429, errorCode: 'SPENDING_LIMIT_EXCEEDED' })
    // The other root user's key is not this limit's.
    expect((await sign(tx(DEAD, 7n), other)).status).toBe(200)
    // Spends before a limit existed are not its own.
    await limit({ scope: { type: 'SPENDING_LIMIT_SCOPE_USER', userId: sub.userIds[1] }, amount: '8' })
    expect((await sign(tx(DEAD, 8n), other)).status).toBe(200)
    expect(refusal(await sign(tx(DEAD, 1n), other))).toEqual({
      status: 429,
      errorCode: 'SPENDING_LIMIT_EXCEEDED',
    })
  })

  it('another sub-organization cannot see, change or delete a limit; a non-root key cannot raise its own', async () => {
    const { h, sub, submit, limit, list, sign } = await setup()
    const id = await limit({})
    const stranger = await h.createSubOrganization()
    const asStranger = { as: stranger.keys[0]!, organizationId: stranger.organizationId }
    const listed = await h.query('latchkey_list_spending_limits', {}, asStranger)
    expect(listed.body.spendingLimits).toEqual([])
    // Naming the victim's organization with the stranger's key: refused at the door.
    expect(
      (
        await h.query(
          'latchkey_list_spending_limits',
          {},
          { ...asStranger, organizationId: sub.organizationId },
        )
      ).status,
    ).toBe(403)
    for (const [path, parameters] of [
      ['latchkey_update_spending_limit', { spendingLimitId: id, amount: '1000000' }],
      ['latchkey_delete_spending_limit', { spendingLimitId: id }],
    ] as const) {
      h.clock.advance(1)
      expect(refusal(await h.submit(path, parameters, asStranger))).toEqual({
        status: 404,
        errorCode: 'SPENDING_LIMIT_NOT_FOUND',
      })
      h.clock.advance(1)
      expect(
        refusal(await h.submit(path, parameters, { ...asStranger, organizationId: sub.organizationId })),
      ).toEqual({ status: 403, errorCode: 'PERMISSION_DENIED' })
    }
    // A non-root agent key allowed to sign (by policy) cannot raise or remove its own limit.
    const agent = testKey()
    const { userIds } = resultOf('create_users', await submit('create_users', agentUser(agent)))
    resultOf(
      'create_policy',
      await submit('create_policy', {
        policyName: 'agent signs',
        effect: 'EFFECT_ALLOW',
        condition: "activity.resource == 'WALLET' && activity.action == 'SIGN'",
        consensus: `approvers.any(user, user.id == '${userIds[0]}')`,
        notes: '',
      }),
    )
    const agentLimit = await limit({
      scope: { type: 'SPENDING_LIMIT_SCOPE_USER', userId: userIds[0] },
      amount: '2',
    })
    expect((await sign(tx(DEAD, 2n), agent)).status).toBe(200)
    expect(refusal(await sign(tx(DEAD, 1n), agent))).toEqual({
      status: 429,
      errorCode: 'SPENDING_LIMIT_EXCEEDED',
    })
    for (const [path, parameters] of [
      ['latchkey_update_spending_limit', { spendingLimitId: agentLimit, amount: '1000' }],
      ['latchkey_delete_spending_limit', { spendingLimitId: agentLimit }],
      [
        'latchkey_create_spending_limit',
        {
          spendingLimitName: 'mine',
          scope: { type: 'SPENDING_LIMIT_SCOPE_USER', userId: userIds[0] },
          window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_HOUR' },
          asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:1' },
          amount: '1000',
        },
      ],
    ] as const)
      expect(refusal(await submit(path, parameters, agent))).toEqual({
        status: 403,
        errorCode: 'PERMISSION_DENIED',
      })
    expect((await list()).find((entry) => entry.spendingLimitId === agentLimit)).toMatchObject({
      amount: '2',
      used: '2',
    })
  })

  it('a replayed signing request is answered with the first activity and counted once', async () => {
    const { h, sub, limit, list, eth } = await setup()
    await limit({})
    const parameters = { signWith: eth, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: tx(DEAD, 3n) }
    const options = {
      as: sub.keys[0]!,
      organizationId: sub.organizationId,
      timestampMs: String(h.clock.now()),
    }
    const replies = await Promise.all([1, 2, 3].map(() => h.submit('sign_transaction', parameters, options)))
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200])
    expect(new Set(replies.map((reply) => reply.body.activity.id)).size).toBe(1)
    expect((await list())[0]).toMatchObject({ used: '3' })
  })

  it('a busy rolling limit keeps 32 spends to the millisecond; past them a spend joins the last entry of its second (a day over 86,400), which frees at its time, never earlier', async () => {
    const { h, limit, sign, list } = await setup()
    const id = await limit({ amount: '1000' })
    const entries = async () => entriesOf(logOf(await h.service.store.get('spendingLimitUsage', id)))
    // A second's start; `sign` advances the clock 1 ms: 32 spends at +1..+32 ms, 32 entries.
    const second = Math.ceil(h.clock.now() / 1000) * 1000 + 1000
    h.clock.set(second)
    for (let n = 0; n < EXACT_ENTRIES; n++) expect((await sign(tx(DEAD, 1n))).status).toBe(200)
    const exact = await entries()
    expect(exact).toHaveLength(EXACT_ENTRIES)
    const lastAt = second + EXACT_ENTRIES
    expect(exact.at(-1)!.at).toBe(lastAt)
    // At +500 ms, the same second: into the last entry, which moves to its time.
    h.clock.set(second + 499)
    expect((await sign(tx(DEAD, 2n))).status).toBe(200)
    // At +1000 ms, half a second later but the next second: an entry of its own.
    h.clock.set(second + 999)
    expect((await sign(tx(DEAD, 4n))).status).toBe(200)
    const busy = await entries()
    expect(busy).toHaveLength(EXACT_ENTRIES + 1)
    expect(busy.slice(-2)).toEqual([
      { at: second + 500, amount: '3' },
      { at: second + 1000, amount: '4' },
    ])
    expect((await list())[0]).toMatchObject({ used: '38' })
    // The 32nd spend would have left at lastAt + DAY; it leaves with the one it joined.
    h.clock.set(lastAt + DAY)
    expect((await list())[0]).toMatchObject({ used: '7' })
    h.clock.set(second + 500 + DAY - 1)
    expect((await list())[0]).toMatchObject({ used: '7' })
    h.clock.set(second + 500 + DAY)
    expect((await list())[0]).toMatchObject({
      used: '4',
      nextReleaseTimestampMs: String(second + 1000 + DAY),
    })
  })

  it("a fixed window's spends share one entry: they all free at the window's end", async () => {
    const { h, limit, sign, list } = await setup()
    const origin = h.clock.now() - 10 * HOUR
    const id = await limit({
      window: { type: 'SPENDING_LIMIT_WINDOW_FIXED', period: 'PERIOD_DAY', startTimestampMs: String(origin) },
    })
    for (const value of [1n, 2n, 3n]) {
      expect((await sign(tx(DEAD, value))).status).toBe(200)
      h.clock.advance(HOUR)
    }
    const [entry, ...more] = entriesOf(logOf(await h.service.store.get('spendingLimitUsage', id)))
    expect(more).toEqual([])
    expect(entry).toMatchObject({ amount: '6' })
    h.clock.set(origin + DAY - 1)
    expect((await list())[0]).toMatchObject({ used: '6', nextReleaseTimestampMs: String(origin + DAY) })
    h.clock.set(origin + DAY)
    expect((await list())[0]).toMatchObject({ used: '0' })
    expect((await sign(tx(DEAD, 10n))).status).toBe(200)
  })

  it('signatures of one millisecond share one entry of the usage row; it still frees exactly a window later', async () => {
    const { h, sub, limit, list, eth } = await setup()
    const id = await limit({})
    const at = h.clock.now()
    const sign = (value: bigint) =>
      h.submit(
        'sign_transaction',
        { signWith: eth, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: tx(DEAD, value) },
        { as: sub.keys[0]!, organizationId: sub.organizationId },
      )
    for (const value of [2n, 3n]) expect((await sign(value)).status).toBe(200)
    h.clock.advance(1)
    expect((await sign(1n)).status).toBe(200)
    // No reference: a signature is never given back (only a send's entry names it).
    expect(entriesOf(logOf(await h.service.store.get('spendingLimitUsage', id)))).toEqual([
      { at, amount: '5' },
      { at: at + 1, amount: '1' },
    ])
    h.clock.set(at + DAY - 1)
    expect((await list())[0]).toMatchObject({ used: '6' })
    h.clock.set(at + DAY)
    expect((await list())[0]).toMatchObject({ used: '1' })
  })
})

const DEAD_SOL = 'Dead111111111111111111111111111111111111111' as Address
const FRIEND_SOL = 'Friend1111111111111111111111111111111111111' as Address
const USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v' as Address
const USDT_MINT = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB' as Address
