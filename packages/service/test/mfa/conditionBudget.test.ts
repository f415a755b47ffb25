// The MFA gate judges each MFA policy of the submitter in every scope of the activity (each payload
// of sign_raw_payloads, each call of a send). Each evaluation once had 20,000 steps of its own and
// nothing capped their sum: an end user (root of their own sub-organization) stored 20 MFA
// policies (the per-user cap) whose conditions are false at ~18,400 steps, proven by their own API
// key's stamp, and one sign_raw_payloads of 100 payloads ran 36.8 million steps on the service's
// thread (~3.2 s) before it was signed; an approval counting as consent was judged the same way.
// The gate's evaluations of one activity now share one decision budget (`decisionBudget`), as the
// policies' do, and a condition left unjudged when it runs out counts as matching: the activity
// waits for that policy.
// Counts steps through evaluateExpression, so it runs in a module registry of its own
// (vite.config.ts, `isolatedNodeTests`).
import { base32nopad } from '@scure/base'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { totp } from '../../src/mfa/totp.ts'
import { POLICY_LIMITS } from '../../src/policies/limits.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  type Harness,
  resultOf,
  type TestKey,
  testKey,
} from '../../src/testing/harness.ts'

/** Steps taken from a shared budget, and steps of evaluations given none (capped by nothing). */
const steps = { budgeted: 0, unbudgeted: 0 }
vi.mock('../../src/policies/evaluateExpression.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/policies/evaluateExpression.ts')>()
  return {
    ...original,
    evaluateExpression: (...args: Parameters<typeof original.evaluateExpression>) => {
      const [tree, scope, maxSteps, budget] = args
      // An evaluation without a budget gets one that never runs out, counting what it takes.
      const unbudgeted = { left: Number.MAX_SAFE_INTEGER }
      const counted = {
        get remaining() {
          return budget ? budget.remaining : unbudgeted.left
        },
        set remaining(value: number) {
          if (budget) {
            steps.budgeted += budget.remaining - value
            budget.remaining = value
          } else {
            steps.unbudgeted += unbudgeted.left - value
            unbudgeted.left = value
          }
        },
      }
      return original.evaluateExpression(tree, scope, maxSteps, counted)
    },
  }
})

const HELD = 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'
const list = (n: number) => `[${Array.from({ length: n }, () => '0').join(',')}]`
/** False at about 18,400 steps: within one evaluation's 20,000 (an error would hold), in no scope. */
const COSTLY_FALSE = `${list(100)}.all(a, ${list(30)}.all(b, a == b)) && activity.type == 'ACTIVITY_TYPE_NONE'`
const API_KEY_STEP = [{ any: [{ type: 'AUTHENTICATION_TYPE_API_KEY' }] }]
const TOTP_STEP = [{ any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] }]
/** The most MFA policies a user may have. */
const POLICY_CAP = 20

let h: Harness
let org: string
let address: string
let keyA: TestKey
let keyB: TestKey
let userA: string
let userB: string

beforeEach(async () => {
  h = await createHarness()
  keyA = testKey()
  keyB = testKey()
  const sub = await h.createSubOrganization({
    keys: [keyA, keyB],
    wallet: { walletName: 'w', accounts: [ETHEREUM_ACCOUNT] },
  })
  org = sub.organizationId
  address = sub.addresses![0]!
  ;[userA, userB] = sub.userIds as [string, string]
  return () => h.service.close()
})

const submitAs = (key: TestKey, path: Parameters<Harness['submit']>[0], params: unknown) => {
  h.clock.advance(1)
  return h.submit(path, params, { as: key, organizationId: org })
}

/** `count` MFA policies on user A, each with `condition`, proven by `steps`. */
async function policiesOnA(count: number, steps: unknown, condition = COSTLY_FALSE) {
  for (let i = 0; i < count; i++)
    resultOf(
      'create_mfa_policy',
      await submitAs(keyA, 'create_mfa_policy', {
        userId: userA,
        mfaPolicyName: `costly ${i}`,
        condition,
        requiredAuthenticationMethods: steps,
        order: i,
      }),
    )
}

/** A confirmed TOTP factor of user A: returns the next code. */
async function totpOfA() {
  const enrolled = resultOf(
    'latchkey_create_totp_factor',
    await submitAs(keyA, 'latchkey_create_totp_factor', { userId: userA }),
  )
  const secret = base32nopad.decode(enrolled.secret)
  resultOf(
    'latchkey_confirm_totp_factor',
    await submitAs(keyA, 'latchkey_confirm_totp_factor', {
      userId: userA,
      factorId: enrolled.factorId,
      code: totp(secret, h.clock.now()),
    }),
  )
  return () => {
    h.clock.advance(30_000)
    return totp(secret, h.clock.now())
  }
}

const signRaw = (key: TestKey, payloads: number) =>
  submitAs(key, 'sign_raw_payloads', {
    signWith: address,
    payloads: Array.from({ length: payloads }, (_, i) => `0x${(i + 1).toString(16).padStart(64, '0')}`),
    encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
    hashFunction: 'HASH_FUNCTION_NO_OP',
  })

/** `submit`'s reply and the steps every evaluation it made took. */
async function counted<T>(submit: () => Promise<T>) {
  steps.budgeted = 0
  steps.unbudgeted = 0
  const reply = await submit()
  return { reply, ...steps }
}

describe("the MFA gate's conditions share one decision budget", () => {
  it("an end user's 20 costly conditions over 100 payloads take one budget, and the sign runs on their key's stamp", async () => {
    await policiesOnA(POLICY_CAP, API_KEY_STEP)
    const { reply, budgeted, unbudgeted } = await counted(() => signRaw(keyA, 100))
    expect(reply.status).toBe(200)
    expect(reply.body.activity?.status).toBe('ACTIVITY_STATUS_COMPLETED')
    // Every evaluation is capped by a decision's budget: no step escapes one. The policies'
    // decision has a budget of its own (the organization has no policies: it takes nothing).
    expect(unbudgeted).toBe(0)
    expect(budgeted).toBeGreaterThan(0)
    expect(budgeted).toBeLessThanOrEqual(2 * POLICY_LIMITS.maxStepsPerDecision)
  }, 60_000)

  it("an approval that is consent to another user's 100-payload sign is judged within one budget too", async () => {
    await policiesOnA(POLICY_CAP, API_KEY_STEP)
    // By B, who has no MFA policy: every activity now waits for both root users.
    resultOf(
      'update_root_quorum',
      await submitAs(keyB, 'update_root_quorum', { threshold: 2, userIds: [userA, userB] }),
    )
    // B's sign waits for A's vote; A's vote is A's consent to it, judged by A's policies.
    const pending = await signRaw(keyB, 100)
    expect(pending.body.activity?.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    const { reply, budgeted, unbudgeted } = await counted(() =>
      submitAs(keyA, 'approve_activity', { fingerprint: pending.body.activity.fingerprint }),
    )
    expect(reply.body.activity?.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(unbudgeted).toBe(0)
    expect(budgeted).toBeGreaterThan(0)
    // The vote's own decision, the gate's judgment of the vote, and the sign's decision once it runs.
    expect(budgeted).toBeLessThanOrEqual(3 * POLICY_LIMITS.maxStepsPerDecision)
  }, 60_000)

  it('fails closed: conditions left unjudged when the budget runs out hold the activity, which runs with the code', async () => {
    const code = await totpOfA()
    await policiesOnA(3, TOTP_STEP)
    // One payload: the three false conditions fit one budget, and no policy holds the sign.
    const one = await signRaw(keyA, 1)
    expect(one.body.activity?.status).toBe('ACTIVITY_STATUS_COMPLETED')
    // A hundred: the first condition runs out of the budget part-way, so none is judged false and
    // all three hold the sign, each waiting for the code.
    const hundred = await signRaw(keyA, 100)
    expect(hundred.body.activity?.status).toBe(HELD)
    const challenge = await h.service.store.get('mfaChallenges', hundred.body.activity.id)
    expect(challenge?.policies).toHaveLength(3)
    const proven = await submitAs(keyA, 'latchkey_satisfy_mfa', {
      fingerprint: hundred.body.activity.fingerprint,
      totpCode: code(),
    })
    expect(proven.body.activity?.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(proven.body.activity.result.signRawPayloadsResult.signatures).toHaveLength(100)
  }, 60_000)
})
