// An account that the service delegated to LatchkeyDelegate (EIP-7702: a sponsored send, a batch)
// runs the delegate's code when it calls itself: `execute` in ERC-7821 batch mode makes any calls
// with any value when the caller is the account. Under a spending limit such a call, whose
// top-level value is 0, is refused (SPEND_UNDECODABLE naming the limit), in eth_send_transaction
// and sign_transaction alike; before, it moved 0.75 ETH under a 1000-wei limit. The service's own
// batches (its wrapper calling the account) still go through, and a call to itself without calldata
// is counted as any transfer (anvil: a real delegation, real balances).
import { encodeAbiParameters, type Hex, serializeTransaction } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Json, resultOf } from '../../src/testing/harness.ts'
import {
  type Chain,
  endUser,
  erc20Call,
  sponsoredService,
  startChain,
  TOKEN,
  waitForSend,
} from '../sending/sendSupport.ts'

const CAIP2 = 'eip155:31337'
const FRIEND = '0x00000000000000000000000000000000000f00d5'
const THIEF = '0x000000000000000000000000000000000000beef'
const ONE_ETH = 10n ** 18n
/** ERC-7821 batch mode without opData: allowed when the account calls itself. */
const MODE_BATCH = `0x01${'00'.repeat(31)}` as Hex

/** `execute(MODE_BATCH, abi.encode(calls))` on the account itself. */
const executeSelf = (calls: { to: string; value: bigint; data: Hex }[]) =>
  `0xe9ae5c53${encodeAbiParameters(
    [{ type: 'bytes32' }, { type: 'bytes' }],
    [
      MODE_BATCH,
      encodeAbiParameters(
        [{ type: 'tuple[]', components: [{ type: 'address' }, { type: 'uint256' }, { type: 'bytes' }] }],
        [calls.map((c) => [c.to as Hex, c.value, c.data] as const)],
      ),
    ],
  ).slice(2)}` as Hex

const refusal = (reply: { status: number; body: Json }) => ({
  status: reply.status,
  errorCode: reply.body?.details?.errorCode,
})

let chain: Chain
beforeAll(async () => {
  chain = await startChain()
}, 60_000)
afterAll(async () => {
  await chain?.node.close()
})

type Service = Awaited<ReturnType<typeof sponsoredService>>
type User = Awaited<ReturnType<typeof endUser>>

/** A limit on `user`'s account of `asset`, `amount` a day, to `allowed` only. */
async function limitOn(h: Service, user: User, asset: Json, amount: string, allowed: string[] = [FRIEND]) {
  const reply = await h.submit(
    'latchkey_create_spending_limit',
    {
      spendingLimitName: 'agent',
      scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: user.from },
      window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
      asset,
      amount,
      allowedDestinations: allowed,
    },
    user.as,
  )
  return resultOf('latchkey_create_spending_limit', reply).spendingLimitId as string
}

/** Submits `parameters` and waits until the send is final; its status. */
async function sent(h: Service, user: User, parameters: Json) {
  const reply = await user.send(parameters)
  expect(reply.status, JSON.stringify(reply.body)).toBe(200)
  const id = reply.body.activity.result.ethSendTransactionResultV2.sendTransactionStatusId
  return (await waitForSend(h, id, { organizationId: user.organizationId, as: user.as })).txStatus
}

const isDelegated = async (address: string) =>
  ((await chain.rpc('eth_getCode', [address, 'latest'])) as string).toLowerCase().startsWith('0xef0100')

/** `sign_transaction` of an EIP-1559 transaction from `user` on the chain. */
const signTx = (h: Service, user: User, tx: { to: string; value: bigint; data?: Hex; nonce?: number }) =>
  h.submit(
    'sign_transaction',
    {
      signWith: user.from,
      type: 'TRANSACTION_TYPE_ETHEREUM',
      unsignedTransaction: serializeTransaction({
        type: 'eip1559',
        chainId: 31337,
        nonce: tx.nonce ?? 0,
        gas: 100_000n,
        maxFeePerGas: 0n,
        maxPriorityFeePerGas: 0n,
        to: tx.to as Hex,
        value: tx.value,
        data: tx.data ?? '0x',
      }),
    },
    user.as,
  )

describe('a delegated account calling itself under a spending limit', () => {
  it('refuses a sponsored batch and a signed transaction that call execute on the account; the service’s own batches still go', async () => {
    const h = await sponsoredService(chain)
    const user = await endUser(h)
    await chain.fund(user.from, ONE_ETH)
    const limitId = await limitOn(h, user, { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: CAIP2 }, '1000')
    // The service's own sponsored batch: the sponsor's transaction calls the account, which it delegates.
    expect(
      await sent(h, user, {
        sponsor: true,
        calls: [
          { to: FRIEND, value: '1' },
          { to: FRIEND, value: '1' },
        ],
      }),
    ).toBe('INCLUDED')
    expect(await isDelegated(user.from)).toBe(true)
    expect(await chain.balance(FRIEND)).toBe(2n)

    const drain = executeSelf([{ to: THIEF, value: ONE_ETH / 2n, data: '0x' }])
    const batch = await user.send({
      sponsor: true,
      calls: [
        { to: user.from, value: '0', data: drain },
        { to: FRIEND, value: '1' },
      ],
    })
    expect(refusal(batch)).toEqual({ status: 403, errorCode: 'SPEND_UNDECODABLE' })
    expect(batch.body.message).toContain(limitId)
    expect(batch.body.message).toContain('calls the signing account itself')
    // The address in lower case (not checksummed) is the same account.
    const lower = await user.send({
      sponsor: true,
      calls: [{ to: user.from.toLowerCase(), value: '0', data: drain }],
    })
    expect(refusal(lower)).toEqual({ status: 403, errorCode: 'SPEND_UNDECODABLE' })

    const signed = await signTx(h, user, { to: user.from, value: 0n, data: drain })
    expect(refusal(signed)).toEqual({ status: 403, errorCode: 'SPEND_UNDECODABLE' })
    expect(signed.body.message).toContain(limitId)

    // A call to itself without calldata runs no function: allowed, its value counted and held to
    // the allow-list like any transfer's (a zero-value one cancels a nonce).
    expect((await signTx(h, user, { to: user.from, value: 0n })).status).toBe(200)
    expect(refusal(await signTx(h, user, { to: user.from, value: 1n, nonce: 1 }))).toEqual({
      status: 403,
      errorCode: 'SPEND_DESTINATION_NOT_ALLOWED',
    })

    expect(await chain.balance(THIEF)).toBe(0n)
    expect(await chain.balance(user.from)).toBe(ONE_ETH - 2n)
  }, 60_000)

  it('lets the account’s unsponsored batch (its own call to itself) through a native limit, and refuses its call to execute under an ERC-20 limit', async () => {
    const h = await sponsoredService(chain)
    const user = await endUser(h)
    await chain.fund(user.from, ONE_ETH)
    // Ample for the fees an unsponsored batch reserves.
    const nativeId = await limitOn(
      h,
      user,
      { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: CAIP2 },
      ONE_ETH.toString(),
    )
    // The account's batch: its own transaction calls itself (execute), which the limit does not judge.
    expect(
      await sent(h, user, {
        calls: [{ to: FRIEND, value: '1' }, erc20Call('mint', user.from, 100n)],
      }),
    ).toBe('INCLUDED')
    expect(await isDelegated(user.from)).toBe(true)
    expect(await chain.tokenBalance(user.from)).toBe(100n)
    const tokenId = await limitOn(
      h,
      user,
      { type: 'SPENDING_LIMIT_ASSET_ERC20', caip2: CAIP2, contract: TOKEN },
      '10',
    )
    // The token's limit alone.
    const deleted = await h.submit('latchkey_delete_spending_limit', { spendingLimitId: nativeId }, user.as)
    expect(deleted.status).toBe(200)

    const drain = executeSelf([{ to: TOKEN, value: 0n, data: erc20Call('transfer', THIEF, 5n).data }])
    const refused = await user.send({ calls: [{ to: user.from, value: '0', data: drain }] })
    expect(refusal(refused)).toEqual({ status: 403, errorCode: 'SPEND_UNDECODABLE' })
    expect(refused.body.message).toMatch(/calls the signing account itself/)
    expect(refused.body.message).toContain(`spending limit ${tokenId} (agent) covers this signer`)
    expect(await chain.tokenBalance(THIEF)).toBe(0n)
  }, 60_000)
})
