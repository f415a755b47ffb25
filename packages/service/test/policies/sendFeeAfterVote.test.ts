import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sendsCondition } from '../../../../src/components/mfa/rules.ts'
import { type Chain, startChain } from '../sending/sendSupport.ts'
import { backEndSecondFactor, delegatedSender } from './delegated.ts'

const CAIP2 = 'eip155:31337'
const ETH = 10n ** 18n
const GWEI = 10n ** 9n
const PAYEE = '0x00000000000000000000000000000000000c0ffe'

let chain: Chain
beforeAll(async () => {
  chain = await startChain()
}, 60_000)
afterAll(async () => {
  await chain?.node.close()
})

/**
 * A back end whose sends wait for the end user's (root's) approval, with a second factor (TOTP)
 * and the kit's 0.1 ETH passkey rule on it.
 */
async function setup() {
  const { h, t, from } = await delegatedSender(chain, {
    sending: { pollIntervalMs: 60_000 },
    funds: 2n * ETH,
  })
  const rootUserId = t.sub.userIds[0]!
  await t.policy({
    policyName: 'sends the end user approves',
    effect: 'EFFECT_ALLOW',
    condition: "activity.kind == 'eth_send_transaction'",
    consensus: `approvers.any(user, user.id == '${rootUserId}')`,
  })
  const { asBackend } = await backEndSecondFactor(h, t, [
    { name: 'latchkey: sends above an amount need a passkey', condition: sendsCondition(ETH / 10n) },
  ])
  /** A send submitted by the back end, then approved by the end user: its status then. */
  const sendApproved = async (parameters: Record<string, unknown>) => {
    const waiting = await asBackend('eth_send_transaction', {
      from,
      caip2: CAIP2,
      calls: [{ to: PAYEE, value: '1000' }],
      ...parameters,
    })
    expect(waiting.body.activity?.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    h.clock.advance(1)
    const vote = await h.submit(
      'approve_activity',
      { fingerprint: waiting.body.activity.fingerprint },
      t.asRoot,
    )
    expect(vote.status).toBe(200)
    const { body } = await h.query('get_activity', { activityId: waiting.body.activity.id }, t.asBackend)
    return body.activity.status as string
  }
  return { h, sendApproved }
}

describe("a send approved by a vote is judged by its submitter's gates with its fee", () => {
  it('a cheap send runs; one whose value or fee passes the passkey amount is held', async () => {
    const { h, sendApproved } = await setup()
    expect({
      cheap: await sendApproved({}),
      // Value 1000 wei, but up to 1,000,000 gas at 1,000 gwei: 1 ETH of fee.
      dearFee: await sendApproved({
        gasLimit: '1000000',
        maxFeePerGas: String(1_000n * GWEI),
        maxPriorityFeePerGas: String(GWEI),
      }),
      dearValue: await sendApproved({ calls: [{ to: PAYEE, value: String(ETH / 5n) }] }),
    }).toEqual({
      cheap: 'ACTIVITY_STATUS_COMPLETED',
      dearFee: 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED',
      dearValue: 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED',
    })
    await h.service.close()
  }, 60_000)
})
