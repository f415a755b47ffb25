// One activity may be satisfied twice: an MFA policy on a send's fee that matches only at its
// approval holds it again (test/policies/ethSendFee.test.ts). Both satisfactions recorded one
// LATCHKEY_MFA_SATISFIED under the same id (`<activity>.mfa_satisfied`), so the second (naming both
// policies, the one after which the send ran) overwrote the first's delivery, or, with the webhook
// fan-out keeping an endpoint's first delivery of an id, was never sent. Each satisfaction is now
// counted on the challenge and is an event of its own (found by the audit of 85fff493).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resultOf } from '../../src/testing/harness.ts'
import { backEndSecondFactor, delegatedSender } from '../policies/delegated.ts'
import { type Chain, startChain } from '../sending/sendSupport.ts'

const CAIP2 = 'eip155:31337'
const GWEI = 10n ** 9n
const PAYEE = '0x00000000000000000000000000000000000c0ffe'
const EVERY_SEND = "activity.kind == 'eth_send_transaction'"

let chain: Chain
beforeAll(async () => {
  chain = await startChain()
}, 60_000)
afterAll(async () => {
  await chain?.node.close()
})

async function baseFee(gwei: bigint) {
  await chain.rpc('anvil_setNextBlockBaseFeePerGas', [`0x${(gwei * GWEI).toString(16)}`])
  await chain.rpc('evm_mine', [])
}

describe('an activity whose MFA is satisfied twice', () => {
  it('delivers both LATCHKEY_MFA_SATISFIED events (each satisfaction its own id)', async () => {
    const { h, t, from } = await delegatedSender(chain, { sending: { pollIntervalMs: 20 }, webhooks: {} })
    try {
      // The operator's endpoint (the parent's: it hears its sub-organizations' events).
      const { endpointId } = resultOf(
        'create_webhook_endpoint',
        await h.submit('create_webhook_endpoint', {
          url: 'http://127.0.0.1:9/hook',
          name: 'mfa',
          subscriptions: [{ eventType: 'LATCHKEY_MFA_SATISFIED' }],
        }),
      )
      await t.policy({
        policyName: 'back end sends',
        effect: 'EFFECT_ALLOW',
        condition: "activity.resource == 'WALLET'",
      })
      const { asBackend, code } = await backEndSecondFactor(h, t, [
        { name: 'sends 0', condition: EVERY_SEND },
        { name: 'sends 1', condition: `${EVERY_SEND} && eth.tx.max_fee_per_gas > ${100n * GWEI}` },
      ])
      const listed = async () => {
        const reply = await h.query('latchkey_list_webhook_deliveries', {
          endpointId,
          paginationOptions: { limit: '100' },
        })
        expect(reply.status).toBe(200)
        return (
          reply.body.webhookDeliveries as {
            eventId: string
            eventType: string
            sequence: number
            body: string
          }[]
        ).sort((a, b) => a.sequence - b.sequence)
      }
      await baseFee(1n)
      h.clock.advance(1)
      const held = await h.submit(
        'eth_send_transaction',
        { from, caip2: CAIP2, calls: [{ to: PAYEE, value: '1000' }] } as never,
        t.asBackend,
      )
      expect(held.body.activity?.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
      await baseFee(60n)
      const approve = async () => {
        h.clock.advance(30_000)
        await asBackend('latchkey_satisfy_mfa', {
          fingerprint: held.body.activity.fingerprint,
          totpCode: code(),
        })
        const { body } = await h.query('get_activity', { activityId: held.body.activity.id }, t.asBackend)
        return body.activity.status as string
      }
      expect(await approve()).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED') // held again, by the fee policy
      await listed() // fanned out (the listing fans out what waits, as the job worker's tick would)
      expect(await approve()).toBe('ACTIVITY_STATUS_COMPLETED')
      const rows = await listed()
      await baseFee(1n)
      const satisfied = rows
        .filter((row) => row.eventType === 'LATCHKEY_MFA_SATISFIED')
        .map((row) => [
          row.eventId,
          (JSON.parse(row.body) as { data: { policyIds: string[] } }).data.policyIds.length,
        ])
      // Sequences stay gapless either way.
      expect(rows.map((row) => row.sequence)).toEqual(rows.map((_, i) => i + 1))
      // Two satisfactions (the first of policy 0, the second of both): two events delivered.
      expect(satisfied, JSON.stringify(rows.map((r) => [r.sequence, r.eventId]))).toEqual([
        [`${held.body.activity.id}.mfa_satisfied`, 1],
        [`${held.body.activity.id}.mfa_satisfied.2`, 2],
      ])
    } finally {
      await h.service.close()
    }
  }, 60_000)
})
