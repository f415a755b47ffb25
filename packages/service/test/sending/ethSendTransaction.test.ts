import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sponsorAddress } from '../../src/sending/sponsors.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  fakeClock,
  type Harness,
  resultOf,
} from '../../src/testing/harness.ts'
import { type Chain, erc20Call, startChain, waitForSend } from './sendSupport.ts'

let chain: Chain
const CAIP2 = 'eip155:31337'
const DEAD = '0x000000000000000000000000000000000000dead'
const SPENDER = '0x00000000000000000000000000000000000beef1'

beforeAll(async () => {
  chain = await startChain()
}, 60_000)

afterAll(async () => {
  await chain?.node.close()
})

/** A service on the local chain (its clock is the real one: the chain's blocks carry real time). */
async function service(options: Parameters<typeof createHarness>[0] = {}): Promise<Harness> {
  const h = await createHarness({
    clock: fakeClock(Date.now()),
    rpc: { [CAIP2]: chain.url },
    sending: { pollIntervalMs: 20 },
    sponsorship: { delegates: { [CAIP2]: chain.delegate } },
    ...options,
  })
  const sponsor = sponsorAddress(h.service.runtime)
  if (sponsor) await chain.fund(sponsor, 10n ** 19n)
  return h
}

async function newAccount(h: Harness): Promise<string> {
  const { addresses } = resultOf(
    'create_wallet',
    await h.submit('create_wallet', { walletName: `W${Math.random()}`, accounts: [ETHEREUM_ACCOUNT] }),
  )
  return addresses[0]
}

const send = async (h: Harness, parameters: Record<string, unknown>, type?: string) => {
  h.clock.set(Date.now())
  return h.submit('eth_send_transaction', parameters as never, type ? { type } : {})
}

describe('eth_send_transaction', () => {
  it('signs, commits and broadcasts one call from a funded account; the status follows it to INCLUDED', async () => {
    const h = await service()
    const from = await newAccount(h)
    await chain.fund(from, 10n ** 18n)
    const reply = await send(h, { from, caip2: CAIP2, calls: [{ to: DEAD, value: '1000' }] })
    const { sendTransactionStatusId } = resultOf('eth_send_transaction', reply)
    expect(reply.body.activity.result).toEqual({ ethSendTransactionResultV2: { sendTransactionStatusId } })
    const status = await waitForSend(h, sendTransactionStatusId)
    expect(status).toMatchObject({ txStatus: 'INCLUDED', eth: { receipt: { status: 'success' } } })
    const receipt = (await chain.node.waitForReceipt(status.eth.txHash)) as { from: string; to: string }
    expect(receipt).toMatchObject({ from: from.toLowerCase(), to: DEAD.toLowerCase() })
    await h.service.close()
  })

  it('takes the V1 single-call shape and answers under the V1 result key', async () => {
    const h = await service()
    const from = await newAccount(h)
    await chain.fund(from, 10n ** 18n)
    const reply = await send(
      h,
      { from, caip2: CAIP2, to: DEAD, value: '7' },
      'ACTIVITY_TYPE_ETH_SEND_TRANSACTION',
    )
    expect(reply.status).toBe(200)
    expect(reply.body.activity.type).toBe('ACTIVITY_TYPE_ETH_SEND_TRANSACTION')
    const { sendTransactionStatusId } = reply.body.activity.result.ethSendTransactionResult
    expect(await waitForSend(h, sendTransactionStatusId)).toMatchObject({ txStatus: 'INCLUDED' })
    await h.service.close()
  })

  it('runs a sponsored batch from an account holding no ETH atomically, the sponsor paying', async () => {
    const h = await service()
    const from = await newAccount(h)
    const sponsor = sponsorAddress(h.service.runtime)!
    const sponsorBefore = await chain.balance(sponsor)
    const reply = await send(h, {
      from,
      caip2: CAIP2,
      sponsor: true,
      calls: [
        erc20Call('mint', from, 100n),
        erc20Call('approve', SPENDER, 40n),
        erc20Call('transfer', DEAD, 30n),
      ],
    })
    const { sendTransactionStatusId } = resultOf('eth_send_transaction', reply)
    const status = await waitForSend(h, sendTransactionStatusId)
    expect(status.txStatus).toBe('INCLUDED')
    const mined = (await chain.rpc('eth_getTransactionByHash', [status.eth.txHash])) as {
      from: string
      type: string
    }
    expect(mined).toMatchObject({ from: sponsor.toLowerCase(), type: '0x4' })
    expect(await chain.tokenBalance(from)).toBe(70n)
    expect(await chain.allowance(from, SPENDER)).toBe(40n)
    expect(await chain.balance(from)).toBe(0n)
    expect(await chain.balance(sponsor)).toBeLessThan(sponsorBefore)
    // The account now delegates: the next batch carries no authorization and the next delegate nonce.
    const nonces = await h.query('get_nonces', {
      address: from,
      caip2: CAIP2,
      nonce: true,
      gasStationNonce: true,
    })
    expect(nonces.body).toEqual({ nonce: '1', gasStationNonce: '1' })

    // A sponsored batch whose last call reverts is simulated and refused before signing: the
    // sponsor pays nothing for it (an unsponsored one's atomic failure is in sponsorMoney.test.ts).
    const sponsorAfter = await chain.balance(sponsor)
    const failing = await send(h, {
      from,
      caip2: CAIP2,
      sponsor: true,
      calls: [erc20Call('approve', SPENDER, 1n), erc20Call('transfer', DEAD, 10_000n)],
    })
    expect(failing).toMatchObject({
      status: 412,
      body: { details: { errorCode: 'TRANSACTION_REVERTED', revertChain: [{ errorType: 'custom' }] } },
    })
    expect(await chain.balance(sponsor)).toBe(sponsorAfter)
    expect(await chain.allowance(from, SPENDER)).toBe(40n)
    expect(await chain.tokenBalance(from)).toBe(70n)
    expect(await chain.balance(from)).toBe(0n)
    await h.service.close()
  })
})
