import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sendsCondition } from '../../../../src/components/mfa/rules.ts'
import { resultOf } from '../../src/testing/harness.ts'
import { backEndSecondFactor, delegatedSender } from '../policies/delegated.ts'
import { type Chain, startChain, waitForSend } from '../sending/sendSupport.ts'

const CAIP2 = 'eip155:31337'
const ETH = 10n ** 18n
const PAYEE = '0x00000000000000000000000000000000000c0ffe'

let chain: Chain
beforeAll(async () => {
  chain = await startChain()
}, 60_000)
afterAll(async () => {
  await chain?.node.close()
})

async function setup() {
  const { h, t, from } = await delegatedSender(chain, { sending: { pollIntervalMs: 20 }, funds: 2n * ETH })
  await t.policy({ policyName: 'sends', effect: 'EFFECT_ALLOW', condition: "activity.resource == 'WALLET'" })
  const { asBackend } = await backEndSecondFactor(h, t, [
    { name: 'latchkey: sends above an amount need a passkey', condition: sendsCondition(ETH / 10n) },
  ])
  const send = (calls: { to: string; value: string }[]) =>
    asBackend('eth_send_transaction', { from, caip2: CAIP2, calls })
  return { h, t, from, send }
}

describe('the passkey rule and the calls of a batch', () => {
  it('bounds each call: five calls of 0.09 ETH run in one send, a call over the amount holds the batch', async () => {
    const { h, t, send } = await setup()
    const wait = (id: string) => waitForSend(h, id, { organizationId: t.sub.organizationId, as: t.asBackend })
    const call = (value: bigint) => ({ to: PAYEE, value: String(value) })
    // One call of 0.45 ETH is held; one of 0.09 ETH passes (under the amount, fee included).
    const single = await send([call((45n * ETH) / 100n)])
    const small = await send([call((9n * ETH) / 100n)])
    // One call over the amount holds the whole batch, whatever the others.
    const mixed = await send([call(ETH / 100n), call((11n * ETH) / 100n), call(ETH / 100n)])
    expect([single, small, mixed].map((reply) => reply.body.activity?.status)).toEqual([
      'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED',
      'ACTIVITY_STATUS_COMPLETED',
      'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED',
    ])
    await wait(resultOf('eth_send_transaction', small).sendTransactionStatusId as string)
    const before = await chain.balance(PAYEE)
    // Five calls of 0.09 ETH, each under the amount with the batch's fee: the send runs.
    const batch = await send([1, 2, 3, 4, 5].map(() => call((9n * ETH) / 100n)))
    expect(batch.body.activity?.status).toBe('ACTIVITY_STATUS_COMPLETED')
    await wait(resultOf('eth_send_transaction', batch).sendTransactionStatusId as string)
    expect((await chain.balance(PAYEE)) - before).toBe((45n * ETH) / 100n)
    await h.service.close()
  }, 60_000)
})
