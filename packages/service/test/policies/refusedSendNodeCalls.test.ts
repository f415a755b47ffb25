// A send's policies read its fee, which its `prepare` fixes from the node (chain id, nonce, block,
// tip, gas estimate), so it is prepared before its decision. Not for a caller refused whatever the
// fee: a dry run of the decision with the fee pending refuses them first, without a node call (no
// ALLOW for them, a DENY matching without reading the fee, their session profile's scope), and a
// `from` that is not the organization's account is refused before the node is asked. A policy
// that reads the fee still gets it: an ALLOW bounding the fee lets a cheap send through. A session
// profile's scope reading the fee refuses in the dry run only what it refuses whatever the fee, and
// a scope that may hold with the fee does not have a send prepared that its policies refuse.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Chain, startChain } from '../sending/sendSupport.ts'
import { countedSender, profiledSession } from './delegated.ts'

const CAIP2 = 'eip155:31337'
const GWEI = 10n ** 9n
const PAYEE = '0x00000000000000000000000000000000000c0ffe'
const STRANGER = '0x000000000000000000000000000000000000dEaD'
// At most 100,000 gas at 100 gwei a gas (0.01 ETH of fee), whatever the value.
const CHEAP_FEE = `activity.kind == 'eth_send_transaction' && eth.tx.gas <= 100000 && eth.tx.max_fee_per_gas <= ${100n * GWEI}`

let chain: Chain
beforeAll(async () => {
  chain = await startChain()
}, 60_000)
afterAll(async () => {
  await chain?.node.close()
})

/** A delegated back end (no policy yet) on a service whose node calls are counted. */
async function setup() {
  const { h, t, from, nodeCalls: calls } = await countedSender(chain)
  const send = async (as: typeof t.asBackend, parameters: Record<string, unknown> = {}) => {
    h.clock.advance(1)
    const before = calls.length
    const reply = await h.submit(
      'eth_send_transaction',
      { from, caip2: CAIP2, calls: [{ to: PAYEE, value: '1' }], ...parameters } as never,
      as,
    )
    return {
      answer: [reply.status, reply.body.details?.errorCode ?? 'sent', reply.body.details?.outcome ?? ''],
      nodeCalls: calls.length - before,
    }
  }
  return { h, t, send }
}

type Setup = Awaited<ReturnType<typeof setup>>

/** A session key that `as` signs in under a new profile of `scope`, made by the end user (root). */
const profiled = ({ h, t }: Setup, as: Setup['t']['asRoot'], scope: string) =>
  profiledSession(h, { owner: t.asRoot, as, scope })

describe('a send refused whatever its fee makes no node call', () => {
  it('no ALLOW for the caller, from the organization or any address', async () => {
    const { h, t, send } = await setup()
    // Policies that read the fee do not concern this caller: a DENY on it, an ALLOW for another user.
    await t.policy({
      policyName: 'no dear gas',
      effect: 'EFFECT_DENY',
      condition: `activity.kind == 'eth_send_transaction' && eth.tx.max_fee_per_gas > ${1_000n * GWEI}`,
    })
    expect([await send(t.asBackend), await send(t.asBackend, { from: STRANGER })]).toEqual([
      { answer: [403, 'PERMISSION_DENIED', 'OUTCOME_DENY_IMPLICIT'], nodeCalls: 0 },
      { answer: [403, 'PERMISSION_DENIED', 'OUTCOME_DENY_IMPLICIT'], nodeCalls: 0 },
    ])
    await h.service.close()
  }, 60_000)

  it('a DENY that matches without reading the fee, beside an ALLOW that reads it', async () => {
    const { h, t, send } = await setup()
    await t.policy({ policyName: 'cheap sends', effect: 'EFFECT_ALLOW', condition: CHEAP_FEE })
    await t.policy({
      policyName: 'not to the payee',
      effect: 'EFFECT_DENY',
      condition: `activity.kind == 'eth_send_transaction' && eth.tx.to == '${PAYEE}'`,
    })
    expect(await send(t.asBackend)).toEqual({
      answer: [403, 'PERMISSION_DENIED', 'OUTCOME_DENY_EXPLICIT'],
      nodeCalls: 0,
    })
    await h.service.close()
  }, 60_000)

  it("its session profile's scope", async () => {
    const ctx = await setup()
    const { h, t, send } = ctx
    // The organization's root user, who may send, signed in under a profile that may only sign.
    const session = await profiled(ctx, t.asRoot, "activity.action == 'SIGN'")
    expect(await send({ ...t.at, as: session })).toEqual({
      answer: [403, 'SESSION_SCOPE_DENIED', 'OUTCOME_DENY_EXPLICIT'],
      nodeCalls: 0,
    })
    await h.service.close()
  }, 60_000)

  it("its session profile's scope reading the fee, false whatever the fee (another address)", async () => {
    const ctx = await setup()
    const { h, t, send } = ctx
    // The root user, who may send, under a profile paying only STRANGER, its fee clauses first.
    const session = await profiled(ctx, t.asRoot, `${CHEAP_FEE} && eth.tx.to == '${STRANGER}'`)
    expect(await send({ ...t.at, as: session })).toEqual({
      answer: [403, 'SESSION_SCOPE_DENIED', 'OUTCOME_DENY_EXPLICIT'],
      nodeCalls: 0,
    })
    await h.service.close()
  }, 60_000)

  it('a session whose profile may send within the fee, but whose policies refuse it whatever the fee', async () => {
    const ctx = await setup()
    const { h, t, send } = ctx
    // The back end may sign in, not send: its scope alone does not have the send prepared.
    await t.policy({
      policyName: 'back end signs in',
      effect: 'EFFECT_ALLOW',
      condition: "activity.kind == 'stamp_login'",
    })
    const session = await profiled(ctx, t.asBackend, `${CHEAP_FEE} && eth.tx.to == '${PAYEE}'`)
    expect(await send({ ...t.at, as: session })).toEqual({
      answer: [403, 'PERMISSION_DENIED', 'OUTCOME_DENY_IMPLICIT'],
      nodeCalls: 0,
    })
    await h.service.close()
  }, 60_000)

  it("an allowed caller's `from` that is not the organization's account", async () => {
    const { h, t, send } = await setup()
    await t.policy({
      policyName: 'sends',
      effect: 'EFFECT_ALLOW',
      condition: "activity.resource == 'WALLET'",
    })
    expect(await send(t.asBackend, { from: STRANGER })).toEqual({
      answer: [404, 'WALLET_ACCOUNT_NOT_FOUND', ''],
      nodeCalls: 0,
    })
    await h.service.close()
  }, 60_000)

  it('control: an ALLOW that reads the fee is judged with it (a cheap send runs, a dear one is refused)', async () => {
    const { h, t, send } = await setup()
    await t.policy({ policyName: 'cheap sends', effect: 'EFFECT_ALLOW', condition: CHEAP_FEE })
    const cheap = await send(t.asBackend)
    const dear = await send(t.asBackend, {
      gasLimit: '1000000',
      maxFeePerGas: String(1_000n * GWEI),
      maxPriorityFeePerGas: String(GWEI),
    })
    expect({ cheap: cheap.answer, dear: dear.answer }).toEqual({
      cheap: [200, 'sent', ''],
      dear: [403, 'PERMISSION_DENIED', 'OUTCOME_DENY_IMPLICIT'],
    })
    expect(cheap.nodeCalls).toBeGreaterThan(0)
    await h.service.close()
  }, 60_000)
})
