// A session issued under a session profile whose scope is "pay one address" with a bounded fee
// (docs/agents.md), sending with eth_send_transaction. A send's fee (eth.tx.gas, eth.tx.max_fee_per_gas)
// is fixed by its `prepare` (node calls), after a dry run of its decision with the fee pending.
// Before, that dry run judged the profile's scope without the fee: a scope reading it was an error,
// and every send of such a session was refused (403 SESSION_SCOPE_DENIED), within the fee or not.
// Now the dry run refuses only a send the scope refuses whatever the fee (another address: no node
// call, wherever the scope puts its fee clauses), and the send is judged with the fee it is signed
// at: within it, signed and broadcast; over it (a gas limit or a max fee its caller set), refused and
// nothing signed; sponsored (0 a gas), through on its other terms. A send that waits (for a vote,
// for a second factor) is judged with the fee it is signed at when let run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Json, resultOf } from '../../src/testing/harness.ts'
import { backEndSecondFactor, countedSender, profiledSession } from '../policies/delegated.ts'
import { type Chain, sendCount, startChain, waitForSend } from '../sending/sendSupport.ts'

const CAIP2 = 'eip155:31337'
const GWEI = 10n ** 9n
const SHOP = '0x00000000000000000000000000000000005a0e01'
const ELSEWHERE = '0x000000000000000000000000000000000000dead'
/** A fee the account pays is at most 50,000 gas at 100 gwei; a sponsored send (0 a gas) pays none. */
const FEE = `(eth.tx.max_fee_per_gas == 0 || (eth.tx.gas <= 50000 && eth.tx.max_fee_per_gas <= ${100n * GWEI}))`
const TO_SHOP = `activity.kind == 'eth_send_transaction' && eth.tx.chain_id == 31337 && eth.tx.to == '${SHOP}' && eth.tx.data == '0x'`
/** "Pay one address", the fee last (as docs/agents.md writes it). */
const PAY_SHOP = `${TO_SHOP} && ${FEE}`
/** The same, the fee first: to another address it is false whatever the fee all the same. */
const PAY_SHOP_FEE_FIRST = `${FEE} && ${TO_SHOP}`

let chain: Chain
beforeAll(async () => {
  chain = await startChain()
}, 60_000)
afterAll(async () => {
  await chain?.node.close()
})

/** The node's next blocks at `gwei` base fee (a block mined at it: `latest` is what prepare reads). */
async function baseFee(gwei: bigint) {
  await chain.rpc('anvil_setNextBlockBaseFeePerGas', [`0x${(gwei * GWEI).toString(16)}`])
  await chain.rpc('evm_mine', [])
}

/**
 * A back end allowed to send from the end user's wallet (`consensus`: with the end user's
 * approval) and to sign in, signed in under a profile of `scope`; its node calls are counted.
 */
async function setup({ scope = PAY_SHOP, consensus = false, pollIntervalMs = 60_000 } = {}) {
  const { h, t, from, nodeCalls: calls } = await countedSender(chain, { sending: { pollIntervalMs } })
  const rootUserId = t.sub.userIds[0]!
  await t.policy({
    policyName: 'back end sends',
    effect: 'EFFECT_ALLOW',
    condition: "activity.resource == 'WALLET'",
    ...(consensus ? { consensus: `approvers.any(user, user.id == '${rootUserId}')` } : {}),
  })
  await t.policy({
    policyName: 'back end signs in',
    effect: 'EFFECT_ALLOW',
    condition: "activity.kind == 'stamp_login'",
  })
  const session = await profiledSession(h, { owner: t.asRoot, as: t.asBackend, scope, name: 'pays the shop' })
  const asSession = { ...t.at, as: session }
  /** A send by the profiled session: its answer, what the node was asked, and what was signed. */
  const send = async (parameters: Json = {}) => {
    h.clock.advance(1)
    const before = { nodeCalls: calls.length, signed: await sendCount(h) }
    const reply = await h.submit(
      'eth_send_transaction',
      { from, caip2: CAIP2, calls: [{ to: SHOP, value: '1000' }], ...parameters } as never,
      asSession,
    )
    return {
      reply,
      answer: [
        reply.status,
        reply.body.details?.errorCode ?? reply.body.activity?.status,
        reply.body.details?.outcome ?? '',
      ],
      nodeCalls: calls.length - before.nodeCalls,
      signed: (await sendCount(h)) - before.signed,
    }
  }
  /** The activity as it is now: its status and the error it failed with. */
  const statusOf = async (activityId: string) => {
    const { body } = await h.query('get_activity', { activityId }, t.asBackend)
    return [body.activity.status, body.activity.failure?.details?.errorCode ?? '']
  }
  return { h, t, from, send, statusOf }
}

const OVER_GAS = { gasLimit: '60000' }
const OVER_FEE = { maxFeePerGas: String(200n * GWEI), maxPriorityFeePerGas: String(GWEI) }

describe("a session profile's scope reading a send's fee", () => {
  it('a send within the fee is signed and broadcast; over it, refused with nothing signed', async () => {
    await baseFee(1n)
    // The send worker polls the node often here: the send is followed until it is mined.
    const { h, t, send } = await setup({ pollIntervalMs: 20 })
    const shopBefore = await chain.balance(SHOP)
    const within = await send()
    const overGas = await send(OVER_GAS)
    const overFee = await send(OVER_FEE)
    expect({
      within: [within.answer, within.signed],
      overGas: [overGas.answer, overGas.signed],
      overFee: [overFee.answer, overFee.signed],
    }).toEqual({
      within: [[200, 'ACTIVITY_STATUS_COMPLETED', ''], 1],
      overGas: [[403, 'SESSION_SCOPE_DENIED', 'OUTCOME_DENY_EXPLICIT'], 0],
      overFee: [[403, 'SESSION_SCOPE_DENIED', 'OUTCOME_DENY_EXPLICIT'], 0],
    })
    const { sendTransactionStatusId } = resultOf('eth_send_transaction', within.reply)
    const status = await waitForSend(h, sendTransactionStatusId, { ...t.at, as: t.asRoot.as as never })
    expect(status.txStatus).toBe('INCLUDED')
    expect((await chain.balance(SHOP)) - shopBefore).toBe(1000n)
    await h.service.close()
  }, 60_000)

  it('a send to another address is refused without a node call, wherever the scope puts the fee', async () => {
    const results: unknown[] = []
    for (const scope of [PAY_SHOP, PAY_SHOP_FEE_FIRST]) {
      const { h, send } = await setup({ scope })
      const elsewhere = await send({ calls: [{ to: ELSEWHERE, value: '1000' }] })
      // A batch whose second call goes elsewhere: every call must be within the scope.
      const batch = await send({
        calls: [
          { to: SHOP, value: '1' },
          { to: ELSEWHERE, value: '1' },
        ],
      })
      // Control: to the shop it is prepared (the node asked for its fee) and sent.
      const shop = await send()
      results.push({
        elsewhere: [elsewhere.answer, elsewhere.nodeCalls, elsewhere.signed],
        batch: [batch.answer, batch.nodeCalls, batch.signed],
        shop: [shop.answer[0], shop.nodeCalls > 0, shop.signed],
      })
      await h.service.close()
    }
    const refused = [[403, 'SESSION_SCOPE_DENIED', 'OUTCOME_DENY_EXPLICIT'], 0, 0]
    expect(results).toEqual([
      { elsewhere: refused, batch: refused, shop: [200, true, 1] },
      { elsewhere: refused, batch: refused, shop: [200, true, 1] },
    ])
  }, 60_000)

  it('a sponsored send (0 a gas) goes through on its other terms', async () => {
    await baseFee(1n)
    const { h, send } = await setup()
    const elsewhere = await send({ sponsor: true, calls: [{ to: ELSEWHERE, value: '1' }] })
    const sponsored = await send({ sponsor: true })
    expect({
      sponsored: [sponsored.answer, sponsored.signed],
      elsewhere: [elsewhere.answer, elsewhere.nodeCalls, elsewhere.signed],
    }).toEqual({
      sponsored: [[200, 'ACTIVITY_STATUS_COMPLETED', ''], 1],
      elsewhere: [[403, 'SESSION_SCOPE_DENIED', 'OUTCOME_DENY_EXPLICIT'], 0, 0],
    })
    await h.service.close()
  }, 60_000)

  it('a send waiting for a vote is judged with the fee it is signed at when the vote lets it run', async () => {
    await baseFee(1n)
    const { h, t, send, statusOf } = await setup({ consensus: true })
    const approve = async (waiting: Awaited<ReturnType<typeof send>>) => {
      expect(waiting.answer).toEqual([200, 'ACTIVITY_STATUS_CONSENSUS_NEEDED', ''])
      h.clock.advance(1)
      const vote = await h.submit(
        'approve_activity',
        { fingerprint: waiting.reply.body.activity.fingerprint },
        t.asRoot,
      )
      expect(vote.status).toBe(200)
      return statusOf(waiting.reply.body.activity.id)
    }
    const within = await send()
    const overFee = await send(OVER_FEE)
    const elsewhere = await send({ calls: [{ to: ELSEWHERE, value: '1000' }] })
    expect({
      within: await approve(within),
      overFee: await approve(overFee),
      elsewhere: [elsewhere.answer, elsewhere.nodeCalls],
      // Not prepared while it waited; signed once, when let run within the fee.
      signed: await sendCount(h),
    }).toEqual({
      within: ['ACTIVITY_STATUS_COMPLETED', ''],
      overFee: ['ACTIVITY_STATUS_FAILED', 'SESSION_SCOPE_DENIED'],
      elsewhere: [[403, 'SESSION_SCOPE_DENIED', 'OUTCOME_DENY_EXPLICIT'], 0],
      signed: 1,
    })
    await h.service.close()
  }, 60_000)

  it('a send held for a second factor is judged at its approval with the fee it is then signed at', async () => {
    const ctx = await setup()
    const { h, t, send, statusOf } = ctx
    const { asBackend, code } = await backEndSecondFactor(h, t, [
      { name: 'every send', condition: "activity.kind == 'eth_send_transaction'" },
    ])
    const approve = async (held: Awaited<ReturnType<typeof send>>) => {
      expect(held.answer).toEqual([200, 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED', ''])
      h.clock.advance(30_000)
      await asBackend('latchkey_satisfy_mfa', {
        fingerprint: held.reply.body.activity.fingerprint,
        totpCode: code(),
      })
      return statusOf(held.reply.body.activity.id)
    }
    // Control: held at 1 gwei, approved at 1 gwei, it is sent.
    await baseFee(1n)
    const cheap = await send()
    expect(await approve(cheap)).toEqual(['ACTIVITY_STATUS_COMPLETED', ''])
    // Held at 1 gwei; by its approval the base fee is 60 gwei, and the fee it would be signed at
    // (twice that and a tip, more with its replacements) is over the scope's 100 gwei.
    const dear = await send()
    await baseFee(60n)
    expect(await approve(dear)).toEqual(['ACTIVITY_STATUS_FAILED', 'SESSION_SCOPE_DENIED'])
    expect(await sendCount(h)).toBe(1)
    await baseFee(1n)
    await h.service.close()
  }, 60_000)
})
