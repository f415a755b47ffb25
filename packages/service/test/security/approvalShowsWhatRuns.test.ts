// <ActivityApproval/> shows an activity's parameters by the protocol's `activityParameters`,
// choosing between a type's two shapes (eth_send_transaction's V2 `calls` or V1's inline call,
// sol_send_transaction's `signWiths` or `signWith`). It must choose as the service's parser does:
// there a `null` is no value (`Reader.has`), so `calls: null` beside `to` and `value` is a V1 send
// of that call. The kit chose by the key being present, so an approver was shown `calls: null` as
// the send, and the recipient and amount that would run under "Other fields, not parameters of
// this action", behind "Show all" after a few decoy fields.
import { activityParameters } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import { Reader } from '../../src/kernel/Reader.ts'
import { parseEthSend } from '../../src/sending/ethSend.ts'
import { parseSolSend } from '../../src/sending/solSend.ts'

const THIEF = '0x00000000000000000000000000000000000c0ffe'
const ETH = '1000000000000000000'

describe('the approval screen shows the shape the service runs', () => {
  it('eth_send_transaction with calls: null: the inline call the service sends is among the parameters', () => {
    const parameters = {
      from: '0x1111111111111111111111111111111111111111',
      caip2: 'eip155:1',
      calls: null,
      ...Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`note${i}`, 'routine top-up'])),
      to: THIEF,
      value: ETH,
    }
    expect(parseEthSend(new Reader(parameters, 'parameters')).calls).toEqual([
      { to: THIEF, value: ETH, data: '0x' },
    ])
    for (const type of ['ACTIVITY_TYPE_ETH_SEND_TRANSACTION', 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2']) {
      const known = activityParameters(type, {
        ethSendTransactionIntent: parameters,
        ethSendTransactionIntentV2: parameters,
      })
      expect(known?.names).toContain('to')
      expect(known?.names).toContain('value')
      expect(known?.names).not.toContain('calls')
    }
  })

  it('control: a V2 send with calls is shown as its calls', () => {
    const parameters = { from: THIEF, caip2: 'eip155:1', calls: [{ to: THIEF, value: ETH }] }
    const known = activityParameters('ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2', {
      ethSendTransactionIntentV2: parameters,
    })
    expect(known?.names).toContain('calls')
    expect(known?.names).not.toContain('to')
  })

  it('sol_send_transaction with signWiths: null: the signWith the service signs with is among the parameters', () => {
    const signWith = '4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T'
    const parameters = {
      unsignedTransaction: '00',
      signWiths: null,
      signWith,
      caip2: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
    }
    expect(parseSolSend(new Reader(parameters, 'parameters')).signWiths).toEqual([signWith])
    const known = activityParameters('ACTIVITY_TYPE_SOL_SEND_TRANSACTION', {
      solSendTransactionIntent: parameters,
    })
    expect(known?.names).toContain('signWith')
    expect(known?.names).not.toContain('signWiths')
  })
})
