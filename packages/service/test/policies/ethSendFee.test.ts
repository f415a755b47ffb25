import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Chain, startChain } from '../sending/sendSupport.ts'
import { backEndSecondFactor, delegatedSender } from './delegated.ts'

const CAIP2 = 'eip155:31337'
const GWEI = 10n ** 9n
const PAYEE = '0x00000000000000000000000000000000000c0ffe'
// GAS PUSH3 600000 LT PUSH1 13 JUMPI PUSH1 0 DUP1 REVERT JUMPDEST STOP: reverts unless more than
// 600,000 gas is left, so the node's estimate for a call to it is over 600,000.
const GAS_GUARD = '0x00000000000000000000000000000000000b0e02'
const GAS_GUARD_CODE = '0x5a620927c010600d57600080fd5b00'
const FEE_DENY = `activity.kind == 'eth_send_transaction' && eth.tx.max_fee_per_gas > ${100n * GWEI}`
const GAS_DENY = "activity.kind == 'eth_send_transaction' && eth.tx.gas > 500000"

let chain: Chain
beforeAll(async () => {
  chain = await startChain()
  await chain.rpc('anvil_setCode', [GAS_GUARD, GAS_GUARD_CODE])
}, 60_000)
afterAll(async () => {
  await chain?.node.close()
})

/** The node's next blocks at `gwei` base fee (a block mined at it: `latest` is what prepare reads). */
async function baseFee(gwei: bigint) {
  await chain.rpc('anvil_setNextBlockBaseFeePerGas', [`0x${(gwei * GWEI).toString(16)}`])
  await chain.rpc('evm_mine', [])
}

/** A back end allowed to send from the end user's wallet, but not at over 100 gwei nor 500,000 gas. */
async function setup({ denies = true } = {}) {
  const { h, t, from } = await delegatedSender(chain, { sending: { pollIntervalMs: 20 } })
  await t.policy({
    policyName: 'back end sends',
    effect: 'EFFECT_ALLOW',
    condition: "activity.resource == 'WALLET'",
  })
  if (denies) {
    await t.policy({ policyName: 'no dear gas', effect: 'EFFECT_DENY', condition: FEE_DENY })
    await t.policy({ policyName: 'no big gas', effect: 'EFFECT_DENY', condition: GAS_DENY })
  }
  const send = (parameters: Record<string, unknown>) => {
    h.clock.advance(1)
    return h.submit(
      'eth_send_transaction',
      { from, caip2: CAIP2, calls: [{ to: PAYEE, value: '1000' }], ...parameters } as never,
      t.asBackend,
    )
  }
  const outcome = (response: { status: number; body: { details?: { outcome?: string } } }) => [
    response.status,
    response.body.details?.outcome ?? 'sent',
  ]
  return { h, t, from, send, outcome }
}

/**
 * The back end's own second factor (TOTP), MFA policies the end user puts on it (each with that
 * factor as its one step), and its approval of a held activity with a fresh code: the activity's
 * status then, and the outcome it failed with.
 */
async function withSecondFactor(ctx: Awaited<ReturnType<typeof setup>>, conditions: string[]) {
  const { h, t } = ctx
  const { asBackend, code } = await backEndSecondFactor(
    h,
    t,
    conditions.map((condition, order) => ({ name: `sends ${order}`, condition })),
  )
  return async (held: { body: { activity: { id: string; fingerprint: string } } }) => {
    h.clock.advance(30_000)
    await asBackend('latchkey_satisfy_mfa', {
      fingerprint: held.body.activity.fingerprint,
      totpCode: code(),
    })
    const { body } = await h.query('get_activity', { activityId: held.body.activity.id }, t.asBackend)
    return [body.activity.status, body.activity.failure?.details?.outcome ?? '']
  }
}

const EVERY_SEND = "activity.kind == 'eth_send_transaction'"

describe("policies on an eth_send_transaction's fee", () => {
  it('a DENY on eth.tx.max_fee_per_gas or eth.tx.gas holds for a fee the caller sets and for the node estimate', async () => {
    await baseFee(1n)
    const { h, send, outcome } = await setup()
    const results = {
      // Control: the node's fee and estimate for a plain payment.
      plain: outcome(await send({})),
      callerFee: outcome(
        await send({ maxFeePerGas: String(1_000n * GWEI), maxPriorityFeePerGas: String(GWEI) }),
      ),
      // 60 gwei passes the DENY, but three replacements may raise it to 118 gwei.
      callerFeeRaised: outcome(
        await send({ maxFeePerGas: String(60n * GWEI), maxPriorityFeePerGas: String(GWEI) }),
      ),
      callerGas: outcome(await send({ gasLimit: '1000000' })),
      nodeEstimate: outcome(await send({ calls: [{ to: GAS_GUARD, value: '0' }] })),
      // A batch: every call carries its transaction's fee.
      batch: outcome(
        await send({
          calls: [
            { to: PAYEE, value: '1' },
            { to: PAYEE, value: '2' },
          ],
          maxFeePerGas: String(1_000n * GWEI),
          maxPriorityFeePerGas: String(GWEI),
        }),
      ),
      // Sponsored, the account pays no fee: 0 a gas.
      sponsored: outcome(await send({ sponsor: true })),
    }
    expect(results).toEqual({
      plain: [200, 'sent'],
      callerFee: [403, 'OUTCOME_DENY_EXPLICIT'],
      callerFeeRaised: [403, 'OUTCOME_DENY_EXPLICIT'],
      callerGas: [403, 'OUTCOME_DENY_EXPLICIT'],
      nodeEstimate: [403, 'OUTCOME_DENY_EXPLICIT'],
      batch: [403, 'OUTCOME_DENY_EXPLICIT'],
      sponsored: [200, 'sent'],
    })
    await h.service.close()
  }, 60_000)

  it('a send held for a second factor is judged again at approval with the fee it is then signed at', async () => {
    const ctx = await setup()
    const { h, send } = ctx
    const approve = await withSecondFactor(ctx, [EVERY_SEND])

    // Control: held at 1 gwei, approved at 1 gwei, it is sent.
    await baseFee(1n)
    const cheap = await send({})
    expect(cheap.body.activity?.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    expect(await approve(cheap)).toEqual(['ACTIVITY_STATUS_COMPLETED', ''])

    // Held at 1 gwei; by its approval the node's base fee is 60 gwei, and the fee it would now be
    // signed at (120 gwei and a tip, more with its replacements) is one the DENY refuses.
    const dear = await send({})
    expect(dear.body.activity?.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    await baseFee(60n)
    expect(await approve(dear)).toEqual(['ACTIVITY_STATUS_FAILED', 'OUTCOME_DENY_EXPLICIT'])
    await baseFee(1n)
    await h.service.close()
  }, 60_000)

  it('an MFA policy on the fee that a held send matches only at its approval holds it again, for its own step', async () => {
    const ctx = await setup({ denies: false })
    const { h, send } = ctx
    const approve = await withSecondFactor(ctx, [
      EVERY_SEND,
      `${EVERY_SEND} && eth.tx.max_fee_per_gas > ${100n * GWEI}`,
    ])
    await baseFee(1n)
    const held = await send({})
    expect(held.body.activity?.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    // By its approval the node's fee is 60 gwei: the second policy now matches; what was proven of
    // the first still counts.
    await baseFee(60n)
    const first = await approve(held)
    const second = await approve(held)
    expect({ first, second }).toEqual({
      first: ['ACTIVITY_STATUS_AUTHENTICATORS_NEEDED', ''],
      second: ['ACTIVITY_STATUS_COMPLETED', ''],
    })
    await baseFee(1n)
    await h.service.close()
  }, 60_000)
})
