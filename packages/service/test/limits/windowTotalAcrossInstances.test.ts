// 64 signings of one agent in flight on two instances at once (PostgreSQL), then the revoke on A
// racing a second flood: the window total never exceeds the limit, and nothing is signed after the
// revoke's first step (the user) committed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../scripts/postgres.mjs'
import { ETHEREUM_ACCOUNT, type Harness, type Reply, resultOf, testKey } from '../../src/testing/harness.ts'
import { unsignedTransfer } from '../../src/testing/unsignedTransfer.ts'
import { twoInstances } from '../support/twoInstances.ts'

let cluster: PostgresCluster
beforeAll(async () => {
  cluster = await startPostgres()
}, 600_000)
afterAll(async () => {
  await cluster?.dispose()
}, 60_000)

let nonce = 0
const LIMIT = 10n

describe('the window total of a limit signed on from two instances', () => {
  let a: Harness
  let b: Harness
  beforeAll(async () => {
    ;[a, b] = await twoInstances(cluster, 'limits_window_total')
  }, 120_000)
  afterAll(async () => {
    for (const h of [a, b]) await h?.service.close()
  })

  it('64 in flight on A and B: at most the limit signed; after the revoke, nothing', {
    timeout: 120_000,
  }, async () => {
    const sub = await a.createSubOrganization({ wallet: { walletName: 'W', accounts: [ETHEREUM_ACCOUNT] } })
    const owner = sub.keys[0]!
    const organizationId = sub.organizationId
    const asOwner = async (path: Parameters<Harness['submit']>[0], parameters: unknown) => {
      a.clock.advance(1)
      const reply = await a.submit(path, parameters as never, { as: owner, organizationId })
      expect(reply.status, `${path}: ${JSON.stringify(reply.body)}`).toBe(200)
      return reply
    }
    const agent = testKey()
    const { userIds } = resultOf(
      'create_users',
      await asOwner('create_users', {
        users: [
          {
            userName: 'agent',
            apiKeys: [agent.apiKey('agent')],
            authenticators: [],
            oauthProviders: [],
            userTags: [],
          },
        ],
      }),
    )
    const agentUserId = userIds[0] as string
    const { spendingLimitId } = resultOf(
      'latchkey_create_spending_limit',
      await asOwner('latchkey_create_spending_limit', {
        spendingLimitName: 'agent',
        scope: { type: 'SPENDING_LIMIT_SCOPE_USER', userId: agentUserId },
        window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
        asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:1' },
        amount: String(LIMIT),
      }),
    )
    const { policyId } = resultOf(
      'create_policy',
      await asOwner('create_policy', {
        policyName: 'agent signs',
        effect: 'EFFECT_ALLOW',
        condition: `activity.resource == 'WALLET' && activity.action == 'SIGN'`,
        consensus: `approvers.all(user, user.id == '${agentUserId}')`,
        notes: '',
      }),
    )
    const sign = (h: Harness) =>
      h.submit(
        'sign_transaction',
        {
          signWith: sub.addresses![0]!,
          type: 'TRANSACTION_TYPE_ETHEREUM',
          unsignedTransaction: unsignedTransfer({ value: 1n, nonce: nonce++, maxFeePerGas: 0n }),
        } as never,
        { as: agent, organizationId },
      )
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
    await asOwner('delete_users', { userIds: [agentUserId] })
    revokedAt = performance.now()
    await asOwner('delete_policies', { policyIds: [policyId] })
    await asOwner('latchkey_delete_spending_limit', { spendingLimitId })
    done = true
    await Promise.all(floods)
    const ok = replies.filter(({ reply }) => reply.status === 200)
    expect(ok.length).toBeLessThanOrEqual(Number(LIMIT))
    expect(ok.filter(({ sentAt }) => sentAt > revokedAt).length).toBe(0)
  })
})
