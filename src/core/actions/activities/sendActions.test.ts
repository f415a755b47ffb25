import { beforeEach, describe, expect, it } from 'vitest'
import { CallsStatusTimeoutError } from '../../errors.ts'
import { type ClientFixture, createClientFixture } from '../../test/fixtures.ts'
import { type RecordedSendService, recordedSendService } from '../../test/recordedSendService.ts'
import type { Latchkey } from '../../types.ts'
import { getCallsStatus } from '../queries/getCallsStatus.ts'
import { sendCalls } from './sendCalls.ts'
import { sendTransaction } from './sendTransaction.ts'

const FROM = '0x5B38Da6a701c568545dCfcB03FcB875f56beddC4'
const TOKEN = '0x000000000000000000000000000000000000aaaa'
const HASH = `0x${'cd'.repeat(32)}`

describe('sending: the published request and status shapes', () => {
  let fx: ClientFixture
  let send: RecordedSendService
  let client: Latchkey
  let organizationId: string
  beforeEach(async () => {
    fx = await createClientFixture()
    ;({ organizationId } = await fx.signUpDirect())
    send = recordedSendService(fx.harness.service.fetch as typeof fetch)
    client = fx.reload({ fetch: send.fetch })
  })

  it('sendCalls submits ETH_SEND_TRANSACTION_V2, stamped, with only the wire fields of each call', async () => {
    const result = await sendCalls(client, {
      from: FROM,
      caip2: 'eip155:31337',
      sponsor: true,
      calls: [
        { to: TOKEN, data: '0x095ea7b3' },
        { to: TOKEN, value: '0', data: '0x', label: 'ignored' } as never,
      ],
    })
    expect(send.sends).toEqual([
      {
        path: 'eth_send_transaction',
        type: 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2',
        organizationId,
        parameters: {
          from: FROM,
          caip2: 'eip155:31337',
          sponsor: true,
          calls: [
            { to: TOKEN, data: '0x095ea7b3' },
            { to: TOKEN, value: '0' },
          ],
        },
        stamped: true,
        sendTransactionStatusId: result.sendTransactionStatusId,
      },
    ])
    expect(result.activityId).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('sendTransaction sends one Ethereum call, or a Solana transaction with its signers', async () => {
    await sendTransaction(client, { from: FROM, caip2: 'eip155:1', to: TOKEN, value: '1000' })
    await sendTransaction(client, {
      unsignedTransaction: '01'.padEnd(130, '0'),
      signWith: 'Fw6s9f8W1b2wHwDkqf4mR2Zz8x3dX7J6iX5jv8YQ6bKM',
      caip2: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
      sponsor: true,
    })
    expect(send.sends.map(({ type, parameters }) => ({ type, parameters }))).toEqual([
      {
        type: 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2',
        parameters: { from: FROM, caip2: 'eip155:1', calls: [{ to: TOKEN, value: '1000' }] },
      },
      {
        type: 'ACTIVITY_TYPE_SOL_SEND_TRANSACTION_V2',
        parameters: {
          unsignedTransaction: '01'.padEnd(130, '0'),
          signWiths: ['Fw6s9f8W1b2wHwDkqf4mR2Zz8x3dX7J6iX5jv8YQ6bKM'],
          caip2: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
          sponsor: true,
        },
      },
    ])
  })

  it('getCallsStatus reads once, or with wait polls until INCLUDED and no further', async () => {
    const { sendTransactionStatusId: id } = await sendCalls(client, {
      from: FROM,
      caip2: 'eip155:1',
      calls: [{ to: TOKEN }],
    })
    send.statuses.set(id, [
      { txStatus: 'PENDING' },
      { txStatus: 'BROADCASTED' },
      { txStatus: 'INCLUDED', eth: { txHash: HASH } },
    ])
    expect(await getCallsStatus(client, { sendTransactionStatusId: id })).toEqual({
      txStatus: 'PENDING',
      status: 'pending',
      final: false,
    })
    expect(
      await getCallsStatus(client, { sendTransactionStatusId: id, wait: true, pollingIntervalMs: 5 }),
    ).toEqual({
      txStatus: 'INCLUDED',
      eth: { txHash: HASH },
      status: 'success',
      final: true,
    })
    expect(send.reads.get(id)).toBe(3)
  })

  it('getCallsStatus: FAILED and CANCELLED are final failures carrying the error', async () => {
    const failed = await sendCalls(client, { from: FROM, caip2: 'eip155:1', calls: [{ to: TOKEN }] })
    const cancelled = await sendCalls(client, { from: FROM, caip2: 'eip155:1', calls: [{ to: TOKEN }] })
    send.statuses.set(failed.sendTransactionStatusId, [
      {
        txStatus: 'FAILED',
        eth: { txHash: HASH },
        txError: 'execution reverted',
        error: { message: 'ERC20: insufficient allowance' },
      },
    ])
    send.statuses.set(cancelled.sendTransactionStatusId, [{ txStatus: 'CANCELLED' }])
    expect(
      await getCallsStatus(client, { sendTransactionStatusId: failed.sendTransactionStatusId, wait: true }),
    ).toEqual({
      txStatus: 'FAILED',
      eth: { txHash: HASH },
      txError: 'execution reverted',
      error: { message: 'ERC20: insufficient allowance' },
      status: 'failure',
      final: true,
    })
    expect(
      await getCallsStatus(client, {
        sendTransactionStatusId: cancelled.sendTransactionStatusId,
        wait: true,
      }),
    ).toMatchObject({ status: 'failure', final: true })
  })

  it('getCallsStatus with wait gives up with CallsStatusTimeoutError while still pending', async () => {
    const { sendTransactionStatusId: id } = await sendCalls(client, {
      from: FROM,
      caip2: 'eip155:1',
      calls: [{ to: TOKEN }],
    })
    send.statuses.set(id, [{ txStatus: 'BROADCASTED' }])
    const error = await getCallsStatus(client, {
      sendTransactionStatusId: id,
      wait: true,
      pollingIntervalMs: 10,
      timeoutMs: 35,
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CallsStatusTimeoutError)
    expect(error).toMatchObject({
      code: 'POLL_TIMEOUT',
      details: { sendTransactionStatusId: id, txStatus: 'BROADCASTED', timeoutMs: 35 },
    })
  })

  it('an unknown send id is the service error it answers', async () => {
    const error = await getCallsStatus(client, { sendTransactionStatusId: 'nope' }).catch((e: unknown) => e)
    expect(error).toMatchObject({ status: 404 })
  })
})
