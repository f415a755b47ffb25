// 64 signings of one agent in flight on two instances at once (PostgreSQL), then the revoke on A
// racing a second flood: the window total never exceeds the limit, and nothing is signed after the
// revoke's first step (the user) committed.
import { describe, expect, it } from 'vitest'
import type { Harness, Reply } from '../../src/testing/harness.ts'
import { usePostgres, useTwoInstances } from '../support/twoInstances.ts'
import { agentGrant, signTransaction } from './agentGrant.ts'

const postgres = usePostgres()

const LIMIT = 10n

describe('the window total of a limit signed on from two instances', () => {
  const pair = useTwoInstances('limits_window_total', { postgres })

  it('64 in flight on A and B: at most the limit signed; after the revoke, nothing', {
    timeout: 120_000,
  }, async () => {
    const { a, b } = pair
    // The agent user's limit, and an ALLOW for any signing of its own.
    const grant = await agentGrant(a, {
      allowance: LIMIT,
      limit: { spendingLimitName: 'agent', scope: 'user' },
      policy: {
        policyName: 'agent signs',
        condition: `activity.resource == 'WALLET' && activity.action == 'SIGN'`,
      },
      completed: false,
    })
    const sign = (h: Harness) =>
      h.submit(...signTransaction(grant.address, grant.agent, grant.organizationId, 1n))
    const first = await Promise.all(Array.from({ length: 64 }, (_, i) => sign(i % 2 ? a : b)))
    expect(first.filter((reply) => reply.status === 200).length).toBe(Number(LIMIT))
    // The window moves on; the limit frees.
    for (const h of [a, b]) h.clock.advance(86_400_000)
    let revokedAt = Number.POSITIVE_INFINITY
    const replies: { reply: Reply; sentAt: number; doneAt: number }[] = []
    let done = false
    const flood = async (h: Harness) => {
      while (!done) {
        const sentAt = performance.now()
        const reply = await sign(h)
        replies.push({ reply, sentAt, doneAt: performance.now() })
      }
    }
    const floods = Array.from({ length: 64 }, (_, i) => flood(i % 2 ? a : b))
    await new Promise((resolve) => setTimeout(resolve, 150))
    await grant.revoke('user')
    revokedAt = performance.now()
    await grant.revoke('policy', 'limit')
    done = true
    await Promise.all(floods)
    const ok = replies.filter(({ reply }) => reply.status === 200)
    expect(ok.length).toBeLessThanOrEqual(Number(LIMIT))
    expect(ok.filter(({ sentAt }) => sentAt > revokedAt).length).toBe(0)
  })
})
