// A send's dry run (its fee pending) evaluates its policies with one decision's step budget, then
// evaluates again each ALLOW policy that failed, in each call, to learn whether it failed on the
// fee (`allowFailedOnFacts`): those evaluations had a fresh budget each. An end user (root of their
// own sub-organization) who stored costly ALLOW policies made a 50-call eth_send_transaction run
// millions of steps (19 such policies: ~1.7 s of the service's one thread) before it was refused. They now
// spend from the dry run's budget: past it, a policy is taken as failing on something else, so the
// send is refused without being prepared (no node call).
// Counts steps through evaluateExpression, so it runs in a module registry of its own
// (vite.config.ts, `isolatedNodeTests`).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { POLICY_LIMITS } from '../../src/policies/limits.ts'
import { type Chain, startChain } from '../sending/sendSupport.ts'
import { countedSender } from './delegated.ts'

const steps = { total: 0 }
vi.mock('../../src/policies/evaluateExpression.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/policies/evaluateExpression.ts')>()
  return {
    ...original,
    evaluateExpression: (...args: Parameters<typeof original.evaluateExpression>) => {
      const [tree, scope, maxSteps, budget] = args
      // Every evaluation of a decision passes its budget: count what it takes from it.
      const counted = budget && {
        get remaining() {
          return budget.remaining
        },
        set remaining(value: number) {
          steps.total += budget.remaining - value
          budget.remaining = value
        },
      }
      return original.evaluateExpression(tree, scope, maxSteps, counted)
    },
  }
})

const list = `[${Array.from({ length: 150 }, () => '0').join(',')}]`
/**
 * Spends the whole per-expression budget (20,000 steps), then fails (OUTCOME_ERROR), in each call's
 * scope: it reads the call's `eth.tx` (a policy reading nothing that differs between the scopes is
 * evaluated once for all of them, `evaluatePoliciesInScopes`, and would not spend the budget here).
 */
const COSTLY = `eth.tx.to != '' && ${list}.all(a, ${list}.all(b, a == b))`
/** Costly policies that take most of one budget in a call's two scopes (the send and its call). */
const COSTLY_POLICIES = 9
const PAYEE = '0x00000000000000000000000000000000000c0ffe'

let chain: Chain
beforeAll(async () => {
  chain = await startChain()
}, 60_000)
afterAll(async () => {
  await chain?.node.close()
})

describe("a send's dry run", () => {
  it('re-evaluates the ALLOW policies that failed within its one budget, refusing a 50-call send with no node call', async () => {
    const { h, t, from, nodeCalls: calls } = await countedSender(chain)
    for (let i = 0; i < COSTLY_POLICIES; i++)
      await t.policy({ policyName: `costly ${i}`, effect: 'EFFECT_ALLOW', condition: COSTLY })
    await t.policy({
      policyName: 'sends',
      effect: 'EFFECT_ALLOW',
      condition: "activity.resource == 'WALLET'",
    })
    const send = async (n: number) => {
      h.clock.advance(1)
      steps.total = 0
      const before = calls.length
      const reply = await h.submit(
        'eth_send_transaction',
        {
          from,
          caip2: 'eip155:31337',
          calls: Array.from({ length: n }, () => ({ to: PAYEE, value: '1' })),
        } as never,
        t.asBackend,
      )
      return { status: reply.status, steps: steps.total, nodeCalls: calls.length - before }
    }
    // Control: one call fits the budget (the costly policies fail, the grant allows it): sent.
    const one = await send(1)
    expect(one.status).toBe(200)
    expect(one.nodeCalls).toBeGreaterThan(0)
    // Fifty: the costly policies spend the dry run's budget in the first calls; the rest fail for
    // want of steps, not on the fee. Refused before any node call, in at most one budget for the
    // dry run and one for the decision (each evaluation may overrun the last by its own cap).
    const fifty = await send(50)
    expect(fifty.status).toBe(403)
    expect(fifty.nodeCalls).toBe(0)
    expect(fifty.steps).toBeLessThanOrEqual(2 * (POLICY_LIMITS.maxStepsPerDecision + POLICY_LIMITS.maxSteps))
  })
})
