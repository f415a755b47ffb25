import type { ActivityPath } from '@latchkey/protocol'
import { describe, expect, it, vi } from 'vitest'
import { POLICY_LIMITS } from '../../src/policies/limits.ts'
import { MAX_POLICIES } from '../../src/policies/readPolicyParams.ts'
import { createHarness, type Harness, type Json, type Reply, resultOf } from '../../src/testing/harness.ts'

/** Characters the policy parser was handed (every parse: cache misses, and reading a request). */
const parsedCharacters = vi.hoisted(() => ({ count: 0 }))
vi.mock('../../src/policies/parsePolicy.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/policies/parsePolicy.ts')>()
  return {
    ...original,
    parsePolicy: (source: string, keywords: readonly string[]) => {
      parsedCharacters.count += source.length
      return original.parsePolicy(source, keywords)
    },
  }
})

const MAX = POLICY_LIMITS.maxExpressionCharactersPerOrganization

/** A distinct valid condition of exactly `length` characters (length >= 20). */
const condition = (tag: number, length: number) => {
  const head = `${tag} == ${tag}`
  const tail = ' || 1 == 1'.repeat(Math.floor((length - head.length) / 10))
  return head + tail + ' '.repeat(length - head.length - tail.length)
}

async function account(h: Harness) {
  const sub = await h.createSubOrganization()
  return { as: sub.keys[0]!, organizationId: sub.organizationId, userId: sub.userIds[0]! }
}
type Account = Awaited<ReturnType<typeof account>>

const policy = (name: string, cond: string) => ({ policyName: name, effect: 'EFFECT_ALLOW', condition: cond })

async function submit(h: Harness, a: Account, type: ActivityPath, parameters: Json) {
  h.clock.advance(1)
  return h.submit(type, parameters, a)
}

const refusal = (reply: Reply) => ({
  status: reply.status,
  errorCode: reply.body?.details?.errorCode,
  field: reply.body?.details?.field,
})

describe(`an organization's policy expressions hold at most ${MAX} characters together`, () => {
  it('refuses the create or the growing update that would pass the cap, naming the field', async () => {
    const h = await createHarness()
    const a = await account(h)
    const full = Math.floor(MAX / POLICY_LIMITS.maxExpressionLength)
    const rest = MAX - full * POLICY_LIMITS.maxExpressionLength
    resultOf(
      'create_policies',
      await submit(h, a, 'create_policies', {
        policies: Array.from({ length: full }, (_, i) =>
          policy(`p${i}`, condition(i, POLICY_LIMITS.maxExpressionLength)),
        ),
      }),
    )
    // Up to the cap exactly: passes (a consensus counts too).
    const last = resultOf(
      'create_policy',
      await submit(h, a, 'create_policy', {
        ...policy('last', condition(9000, rest - 40)),
        consensus: `approvers.any(u, u.id == '${'x'.repeat(40 - 31)}')`.padEnd(40, ' '),
      }),
    ) as { policyId: string }

    // One character more, by each path: refused, nothing stored.
    const over = await submit(h, a, 'create_policy', { ...policy('over', '1 == 1'), consensus: '' })
    expect(refusal(over)).toEqual({
      status: 412,
      errorCode: 'RESOURCE_LIMIT_REACHED',
      field: 'parameters.condition',
    })
    const overConsensus = await submit(h, a, 'create_policy', {
      policyName: 'over',
      effect: 'EFFECT_ALLOW',
      consensus: "approvers.any(u, u.id == 'x')",
    })
    expect(refusal(overConsensus)).toEqual({
      status: 412,
      errorCode: 'RESOURCE_LIMIT_REACHED',
      field: 'parameters.consensus',
    })
    const overBatch = await submit(h, a, 'create_policies', {
      policies: [policy('empty', ''), policy('over', 'true')],
    })
    expect(refusal(overBatch)).toEqual({
      status: 412,
      errorCode: 'RESOURCE_LIMIT_REACHED',
      field: 'parameters.policies[1].condition',
    })
    const grow = await submit(h, a, 'update_policy', {
      policyId: last.policyId,
      policyCondition: condition(9001, rest - 40 + 1),
    })
    expect(refusal(grow)).toEqual({
      status: 412,
      errorCode: 'RESOURCE_LIMIT_REACHED',
      field: 'parameters.policyCondition',
    })
    const stored = await h.service.store.findBy('policies', 'organizationId', a.organizationId)
    expect(stored.length).toBe(full + 1)
    expect(stored.reduce((sum, p) => sum + p.condition.length + p.consensus.length, 0)).toBe(MAX)

    // A policy with no expression, a rename, a same-size or shrinking update: not growing, they pass.
    resultOf('create_policy', await submit(h, a, 'create_policy', policy('everything', '')))
    resultOf(
      'update_policy',
      await submit(h, a, 'update_policy', { policyId: last.policyId, policyName: 'renamed' }),
    )
    resultOf(
      'update_policy',
      await submit(h, a, 'update_policy', {
        policyId: last.policyId,
        policyCondition: condition(9002, rest - 40),
      }),
    )
    resultOf(
      'update_policy',
      await submit(h, a, 'update_policy', { policyId: last.policyId, policyCondition: 'true' }),
    )
    // The room freed is usable again.
    resultOf('create_policy', await submit(h, a, 'create_policy', policy('again', condition(9003, 100))))

    // Another organization's room is its own.
    const b = await account(h)
    resultOf('create_policy', await submit(h, b, 'create_policy', policy('p', condition(1, 4096))))
  }, 120_000)

  it('organizations taking turns at the caps make no activity parse more than the cap', async () => {
    const h = await createHarness()
    // The attack: one end user's three sub-organizations, each filled with as many policies as it
    // may hold, all distinct, short enough for the three to overflow the process's tree cache.
    const length = 250
    const accounts = [await account(h), await account(h), await account(h)]
    const refused = new Set<string>()
    for (const [o, a] of accounts.entries())
      for (let call = 0; call < MAX_POLICIES / 50; call++) {
        const reply = await submit(h, a, 'create_policies', {
          policies: Array.from({ length: 50 }, (_, k) =>
            policy(`p${call * 50 + k}`, condition(o * 10_000 + call * 50 + k, length)),
          ),
        })
        if (reply.status !== 200) refused.add(JSON.stringify(refusal(reply)))
      }
    const held = await Promise.all(
      accounts.map(async (a) =>
        (await h.service.store.findBy('policies', 'organizationId', a.organizationId)).reduce(
          (sum, p) => sum + p.condition.length + p.consensus.length,
          0,
        ),
      ),
    )
    expect(held).toEqual(accounts.map(() => Math.min(MAX, MAX_POLICIES * length)))

    // Each account's activity in turn: whatever the cache holds, it parses at most its own policies.
    const perActivity: number[] = []
    let n = 0
    for (let round = 0; round < 3; round++)
      for (const a of accounts) {
        parsedCharacters.count = 0
        resultOf(
          'update_user_name',
          await submit(h, a, 'update_user_name', { userId: a.userId, userName: `n${n++}` }),
        )
        perActivity.push(parsedCharacters.count)
      }
    expect(Math.max(...perActivity)).toBeLessThanOrEqual(MAX)
    // The turns did churn the cache (every activity parsed its policies again): the bound is what held.
    expect(perActivity.slice(3).every((count) => count > MAX / 2)).toBe(true)
    expect([...refused]).toEqual(
      MAX_POLICIES * length > MAX
        ? [
            JSON.stringify({
              status: 412,
              errorCode: 'RESOURCE_LIMIT_REACHED',
              field: 'parameters.policies[0].condition',
            }),
          ]
        : [],
    )
  }, 240_000)
})
