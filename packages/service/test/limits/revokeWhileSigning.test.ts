// An agent's signature in flight on instance B while the user revokes the agent on A (from the
// revoke audit). A signing under a spending limit waits for the organization's spend lock and
// reads the limits after it; it must decide on everything else as of that same moment: the
// agent's key, its user and the policies. Decided on the key and policy read at admission and the
// limits read after the lock, a revoke committed in between (delete_users, delete_policies,
// latchkey_delete_spending_limit: the kit's order) left it with the key, the ALLOW policy and no
// limit, a state the grant and revoke never committed, and it signed 100 ETH under a 10,000 wei
// a day allowance, uncounted. Now: refused once the key is gone; signed uncounted only where a
// committed state had the key and the policy with no limit (the limit removed alone).
import { describe, expect, it } from 'vitest'
import type { Harness, Reply } from '../../src/testing/harness.ts'
import { refusal, submitRacing } from '../security/inFlight.ts'
import { usePostgres, useTwoInstances } from '../support/twoInstances.ts'
import { agentGrant } from './agentGrant.ts'

const postgres = usePostgres()

const ETH = 10n ** 18n
const ALLOWANCE = 10_000n

/** A sub-organization whose agent signs on chain 1 under an allowance of 10,000 wei a day (docs/agents.md). */
const granted = (a: Harness) => agentGrant(a, { allowance: ALLOWANCE })

describe('revoking an agent while a signature of it is in flight on another instance (PostgreSQL)', () => {
  const pair = useTwoInstances('limits_revoke_in_flight', { postgres })

  it('the whole revoke committed between admission and the signing: refused, the key is gone (never 100 ETH signed uncounted)', async () => {
    const { a, b } = pair
    const agent = await granted(a)
    // Control: within the allowance signs on B; 100 ETH is over it.
    expect((await b.submit(...agent.sign(b, 1000n))).status).toBe(200)
    expect(refusal(await b.submit(...agent.sign(b, 100n * ETH)))).toEqual([429, 'SPENDING_LIMIT_EXCEEDED'])
    let revoked = false
    const signed = await submitRacing(
      b,
      async () => {
        await agent.revoke()
        revoked = true
      },
      ...agent.sign(b, 100n * ETH),
    )
    expect(revoked).toBe(true)
    expect(refusal(signed), JSON.stringify(signed.body?.activity?.result ?? signed.body)).toEqual([
      401,
      'PUBLIC_KEY_NOT_FOUND',
    ])
    expect(refusal(await b.submit(...agent.sign(b, 1n)))[0]).toBe(401)
  })

  it('the user deleted alone in that window: refused as of the lock, the key is gone', async () => {
    const { a, b } = pair
    const agent = await granted(a)
    expect((await b.submit(...agent.sign(b, 1000n))).status).toBe(200)
    const signed = await submitRacing(b, () => agent.revoke('user'), ...agent.sign(b, 1000n))
    expect(refusal(signed)).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
    expect(await agent.used()).toEqual(['1000'])
  })

  it('the policy and the limit deleted in that window, the key kept: refused by the policies as they are after the lock', async () => {
    const { a, b } = pair
    const agent = await granted(a)
    const signed = await submitRacing(b, () => agent.revoke('policy', 'limit'), ...agent.sign(b, 100n * ETH))
    expect(signed.status, JSON.stringify(signed.body?.activity?.result ?? signed.body)).toBe(403)
  })

  it('control: the limit alone deleted in that window, key and policy kept: signed uncounted, as the state committed then allows', async () => {
    const { a, b } = pair
    const agent = await granted(a)
    const signed = await submitRacing(b, () => agent.revoke('limit'), ...agent.sign(b, 100n * ETH))
    expect(signed.status, JSON.stringify(signed.body)).toBe(200)
    expect(await agent.used()).toEqual([])
  })

  it('control: the allowance spent on A in that window is seen by the signing on B', async () => {
    const { a, b } = pair
    const agent = await granted(a)
    const signed = await submitRacing(
      b,
      async () => {
        expect((await a.submit(...agent.sign(a, ALLOWANCE))).status).toBe(200)
      },
      ...agent.sign(b, 1n),
    )
    expect(refusal(signed)).toEqual([429, 'SPENDING_LIMIT_EXCEEDED'])
  })

  it('without any hook: an agent flooding B while the user revokes on A gets no signature past its allowance', {
    timeout: 180_000,
  }, async () => {
    const { a, b } = pair
    const replies: Reply[] = []
    // Six grants and revokes; in each, the agent keeps 64 signatures of 1 ETH (each over its
    // allowance) in flight on B while the user revokes on A, at a varying moment. Before the fix,
    // 6 to 8 signed a round.
    for (let round = 0; round < 6; round++) {
      const agent = await granted(a)
      let done = false
      const flood = async () => {
        while (!done) replies.push(await b.submit(...agent.sign(b, ETH)))
      }
      const agents = Array.from({ length: 64 }, flood)
      await new Promise((resolve) => setTimeout(resolve, 100 + 60 * round))
      await agent.revoke()
      done = true
      await Promise.all(agents)
    }
    const outcomes = replies.reduce((counts: Record<string, number>, reply) => {
      const key = String(refusal(reply))
      counts[key] = (counts[key] ?? 0) + 1
      return counts
    }, {})
    for (const outcome of Object.keys(outcomes))
      expect(['401,PUBLIC_KEY_NOT_FOUND', '429,SPENDING_LIMIT_EXCEEDED'], JSON.stringify(outcomes)).toContain(
        outcome,
      )
    expect(replies.filter((reply) => reply.status === 200).length, JSON.stringify(outcomes)).toBe(0)
  })
})
