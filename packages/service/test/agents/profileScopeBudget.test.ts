// A session profile's scope is evaluated for every part of an activity (each payload of
// sign_raw_payloads, each call of a batched send), and a send's up to three times a call (its dry
// run with the fee pending: whole, then operand by operand; then for real). Each evaluation once
// had 20,000 steps of its own and nothing bounded them together, while one activity's policies
// share one decision's budget (400,000 steps, test/policies/decisionBudget.test.ts): an end user,
// root of their own sub-organization, made a profile whose scope is true but costly, and a batch
// of 100 payloads ran 1,840,200 steps on the service's one thread, a 50-call send 2,762,800 (about
// a second), both completed. Now the scope's evaluations for one decision share one budget of the
// same size: past it the activity is refused (403 SESSION_SCOPE_DENIED naming the budget), a send
// already in its dry run, before the node is asked for its fee.
//
// The steps are not counted by wrapping the evaluator (a `vi.mock` would need a module registry of
// its own, the node-isolated project): the scope's cost for one part is measured alone, and the
// service must sign exactly as many parts as one budget pays for, and refuse one more.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mayHold } from '../../src/limits/sessionProfiles.ts'
import { evaluateExpression, type PolicyScope } from '../../src/policies/evaluateExpression.ts'
import { decisionBudget, parseCondition } from '../../src/policies/evaluatePolicies.ts'
import { POLICY_LIMITS } from '../../src/policies/limits.ts'
import { createHarness, ETHEREUM_ACCOUNT, testKey } from '../../src/testing/harness.ts'
import { countedSender, profiledSession } from '../policies/delegated.ts'
import { type Chain, sendCount, startChain } from '../sending/sendSupport.ts'

const list = (n: number) => `[${Array.from({ length: n }, () => '0').join(',')}]`
/** True, at about 18,400 steps: under one evaluation's 20,000, so each evaluation alone passes. */
const COSTLY_TRUE = `${list(100)}.all(a, ${list(30)}.all(b, a == b))`
/** A send's scope as costly, reading its fee last. */
const COSTLY_SEND = `${COSTLY_TRUE} && activity.kind == 'eth_send_transaction' && eth.tx.gas > 0`
const FEE_FIELDS = { ethTx: ['gas', 'max_fee_per_gas', 'max_priority_fee_per_gas'] }
const TO = '0x000000000000000000000000000000000000dead'
/** A call of a send before its fee is known, as the scope reads it. */
const CALL: PolicyScope = { activity: { kind: 'eth_send_transaction' }, eth: { tx: { to: TO, value: 1n } } }
const BUDGET_REFUSAL = new RegExp(
  `outside this session's scope .*: its scope took more than ${POLICY_LIMITS.maxStepsPerDecision} steps`,
)

/** The steps one evaluation of `scope` takes (true, within one evaluation's steps). */
function stepsOf(scope: string, context: PolicyScope = {}): number {
  const budget = decisionBudget()
  expect(evaluateExpression(parseCondition(scope), context, POLICY_LIMITS.maxSteps, budget)).toBe(true)
  return POLICY_LIMITS.maxStepsPerDecision - budget.remaining
}

/** The steps a send's dry run takes for one call (`mayHold`: whole, then operand by operand). */
function dryRunStepsOf(scope: string): number {
  const budget = decisionBudget()
  expect(mayHold(scope, CALL, FEE_FIELDS, budget)).toBe(true)
  return POLICY_LIMITS.maxStepsPerDecision - budget.remaining
}

const COMPLETED = [200, 'ACTIVITY_STATUS_COMPLETED']
const REFUSED = [403, 'SESSION_SCOPE_DENIED']

describe("a session profile's scope and the decision's step budget", () => {
  it("mayHold's two passes (the fee pending) spend from the one budget it is given", () => {
    const once = stepsOf(COSTLY_TRUE)
    expect(once).toBeGreaterThan(POLICY_LIMITS.maxSteps * 0.9)
    expect(once).toBeLessThanOrEqual(POLICY_LIMITS.maxSteps)
    // Whole, it reads the pending gas after the costly operand; then operand by operand again.
    const dryRun = dryRunStepsOf(COSTLY_SEND)
    expect(dryRun).toBeGreaterThan(2 * once)
    // Enough for the first pass, not for both: refused, not "maybe", and the budget shows it spent.
    const short = { remaining: dryRun - 1 }
    expect(mayHold(COSTLY_SEND, CALL, FEE_FIELDS, short)).toBe(false)
    expect(short.remaining).toBeLessThan(0)
    expect(mayHold(COSTLY_SEND, CALL, FEE_FIELDS, { remaining: dryRun })).toBe(true)
    // Refused whole without reading the fee: one pass only, as before.
    const other = decisionBudget()
    expect(mayHold(`${COSTLY_TRUE} && activity.kind == 'x' && eth.tx.gas > 0`, CALL, FEE_FIELDS, other)).toBe(
      false,
    )
    expect(POLICY_LIMITS.maxStepsPerDecision - other.remaining).toBeLessThan(2 * once)
  })

  it('the payloads of one sign_raw_payloads share one budget: past it, 403; a cheap scope signs 100', async () => {
    const h = await createHarness()
    const owner = testKey()
    const sub = await h.createSubOrganization({
      keys: [owner],
      wallet: { walletName: 'w', accounts: [ETHEREUM_ACCOUNT] },
    })
    const as = { as: owner, organizationId: sub.organizationId }
    /** A session of the sub-organization's root, under a profile of `scope` it made. */
    const profiled = (scope: string) => profiledSession(h, { owner: as, as, scope })
    const costly = await profiled(COSTLY_TRUE)
    const cheap = await profiled("activity.action == 'SIGN'")
    const sign = async (payloads: number, session = costly) => {
      h.clock.advance(1)
      const reply = await h.submit(
        'sign_raw_payloads',
        {
          signWith: sub.addresses![0],
          payloads: Array.from({ length: payloads }, (_, i) => `0x${(i + 1).toString(16).padStart(64, '0')}`),
          encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
          hashFunction: 'HASH_FUNCTION_NO_OP',
        },
        { as: session, organizationId: sub.organizationId },
      )
      return {
        answer: [reply.status, reply.body.details?.errorCode ?? reply.body.activity?.status],
        message: String(reply.body.message ?? ''),
      }
    }
    // The sub-organization has no policies: the scope, once a payload, is all that is evaluated.
    const fits = Math.floor(POLICY_LIMITS.maxStepsPerDecision / stepsOf(COSTLY_TRUE))
    expect(fits).toBeGreaterThan(10)
    const one = await sign(1)
    const full = await sign(fits)
    const over = await sign(fits + 1)
    const hundred = await sign(100)
    const control = await sign(100, cheap)
    expect({
      one: one.answer,
      full: full.answer,
      over: over.answer,
      hundred: hundred.answer,
      control: control.answer,
    }).toEqual({ one: COMPLETED, full: COMPLETED, over: REFUSED, hundred: REFUSED, control: COMPLETED })
    expect(over.message).toMatch(BUDGET_REFUSAL)
    expect(hundred.message).toMatch(BUDGET_REFUSAL)
    expect(hundred.message).toContain('all its 100 payloads, signers or calls')
    await h.service.close()
  }, 60_000)
})

describe("a session profile's scope reading a send's fee, and the decision's step budget", () => {
  let chain: Chain
  beforeAll(async () => {
    chain = await startChain()
  }, 60_000)
  afterAll(async () => {
    await chain?.node.close()
  })

  it('a send of more calls than one budget pays for is refused in its dry run, before any node call', async () => {
    const { h, t, from, nodeCalls } = await countedSender(chain)
    // The end user's back end may send and sign in (as in profileScopeFee.test.ts).
    await t.policy({
      policyName: 'sends',
      effect: 'EFFECT_ALLOW',
      condition: "activity.resource == 'WALLET'",
    })
    await t.policy({
      policyName: 'signs in',
      effect: 'EFFECT_ALLOW',
      condition: "activity.kind == 'stamp_login'",
    })
    const session = await profiledSession(h, {
      owner: t.asRoot,
      as: t.asBackend,
      scope: COSTLY_SEND,
      name: 'costly',
    })
    const send = async (calls: number) => {
      const before = { nodeCalls: nodeCalls.length, signed: await sendCount(h) }
      h.clock.advance(1)
      const reply = await h.submit(
        'eth_send_transaction',
        {
          from,
          caip2: 'eip155:31337',
          calls: Array.from({ length: calls }, () => ({ to: TO, value: '1' })),
        } as never,
        { ...t.at, as: session },
      )
      return {
        answer: [reply.status, reply.body.details?.errorCode ?? reply.body.activity?.status],
        message: String(reply.body.message ?? ''),
        nodeCalls: nodeCalls.length - before.nodeCalls,
        signed: (await sendCount(h)) - before.signed,
      }
    }
    // Fifty calls: the dry run (twice the scope a call, the fee pending) runs out of the budget.
    const fifty = await send(50)
    expect([fifty.answer, fifty.signed, fifty.nodeCalls]).toEqual([REFUSED, 0, 0])
    expect(fifty.message).toMatch(BUDGET_REFUSAL)
    // As many calls as one budget pays the dry run for are sent (the node asked for the fee); one
    // more is refused.
    const fits = Math.floor(POLICY_LIMITS.maxStepsPerDecision / dryRunStepsOf(COSTLY_SEND))
    expect(fits).toBeGreaterThan(5)
    const full = await send(fits)
    const over = await send(fits + 1)
    expect({
      full: [full.answer, full.signed, full.nodeCalls > 0],
      over: [over.answer, over.signed, over.nodeCalls],
    }).toEqual({ full: [COMPLETED, 1, true], over: [REFUSED, 0, 0] })
    expect(over.message).toMatch(BUDGET_REFUSAL)
    await h.service.close()
  }, 120_000)
})
