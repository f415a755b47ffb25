// What the tests of a spend under a limit in flight while its organization's root set changes
// share (rootSetAndWalletChangedWhileSigning.test.ts for signings, sendRootSetChangedWhileSending
// .test.ts for sends): two root users each under a user-scoped allowance, and the two cases, each
// committing on the first harness a sequence of changes every state of which refuses the spend
// sent to the second, while that spend waits between its admission and its transaction.
import { expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT, type Harness, resultOf, testKey } from '../../src/testing/harness.ts'
import { refusal, submitRacing } from '../security/inFlight.ts'
import { submitOk } from './agentGrant.ts'

const ETH = 10n ** 18n
/** Each root user's allowance, wei a rolling day. */
const ALLOWANCE = 10_000n

/** Two root users (quorum 1) of a new sub-organization with one Ethereum account, each under an allowance on `caip2`. */
export async function twoRoots(a: Harness, caip2: string) {
  const [r1, r2] = [testKey(), testKey()]
  const sub = await a.createSubOrganization({
    keys: [r1, r2],
    wallet: { walletName: 'W', accounts: [ETHEREUM_ACCOUNT] },
  })
  const organizationId = sub.organizationId
  const [u1, u2] = sub.userIds as [string, string]
  const limitOf: Record<string, string> = {}
  for (const userId of [u1, u2])
    limitOf[userId] = resultOf(
      'latchkey_create_spending_limit',
      await submitOk(
        a,
        'latchkey_create_spending_limit',
        {
          spendingLimitName: `allowance of ${userId}`,
          scope: { type: 'SPENDING_LIMIT_SCOPE_USER', userId },
          window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
          asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2 },
          amount: String(ALLOWANCE),
        },
        r2,
        organizationId,
      ),
    ).spendingLimitId as string
  return { r1, r2, u1, u2, organizationId, address: sub.addresses![0]!, limitOf }
}

export type TwoRoots = Awaited<ReturnType<typeof twoRoots>>

/**
 * The two cases: a spend of 100 ETH by the first root user (`spend`: the request, as that user,
 * on the harness given, its clock moved on), which `roots` makes (on the first harness), in flight
 * on the second harness while the first commits the changes.
 */
export function rootSetCases(
  what: string,
  instances: () => [Harness, Harness],
  roots: (a: Harness) => Promise<TwoRoots>,
  spend: (t: TwoRoots, on: Harness, value: bigint) => Parameters<Harness['submit']>,
) {
  const shown = (reply: Awaited<ReturnType<Harness['submit']>>) =>
    JSON.stringify(reply.body?.activity?.result ?? reply.body)
  it(`a root user removed from the root set, then its limit deleted, while its ${what} is in flight: refused`, async () => {
    const [a, b] = instances()
    const t = await roots(a)
    // Control: the limit holds the root user (100 ETH is over it).
    expect(refusal(await b.submit(...spend(t, b, 100n * ETH)))).toEqual([429, 'SPENDING_LIMIT_EXCEEDED'])
    const reply = await submitRacing(
      b,
      async () => {
        // R2 takes R1 out of the root set (R1 keeps its key, and no policy allows it anything)...
        await submitOk(a, 'update_root_quorum', { threshold: 1, userIds: [t.u2] }, t.r2, t.organizationId)
        // ...then drops R1's now pointless limit.
        await submitOk(
          a,
          'latchkey_delete_spending_limit',
          { spendingLimitId: t.limitOf[t.u1] },
          t.r2,
          t.organizationId,
        )
      },
      ...spend(t, b, 100n * ETH),
    )
    // Every committed state refuses it: before, 429 (over the limit); after, 403 (not root, no policy).
    expect(reply.status, shown(reply)).not.toBe(200)
    // And a fresh one now is refused by the policies.
    expect((await b.submit(...spend(t, b, 100n * ETH))).status).toBe(403)
  })

  it(`the root quorum raised to 2-of-2, then a root user’s limit deleted with both roots’ approval, while that user’s ${what} is in flight: not done alone`, async () => {
    const [a, b] = instances()
    const t = await roots(a)
    expect(refusal(await b.submit(...spend(t, b, 100n * ETH)))).toEqual([429, 'SPENDING_LIMIT_EXCEEDED'])
    const reply = await submitRacing(
      b,
      async () => {
        // The organization moves to 2-of-2 (every root activity needs both)...
        await submitOk(
          a,
          'update_root_quorum',
          { threshold: 2, userIds: [t.u1, t.u2] },
          t.r2,
          t.organizationId,
        )
        // ...then removes R1's limit, which the quorum now makes redundant: R2 proposes, R1 approves.
        const proposed = await submitOk(
          a,
          'latchkey_delete_spending_limit',
          { spendingLimitId: t.limitOf[t.u1] },
          t.r2,
          t.organizationId,
          'ACTIVITY_STATUS_CONSENSUS_NEEDED',
        )
        await submitOk(
          a,
          'approve_activity',
          { fingerprint: proposed.body.activity.fingerprint },
          t.r1,
          t.organizationId,
        )
      },
      ...spend(t, b, 100n * ETH),
    )
    // Before: 1-of-1 but 429 over the limit; after: no limit but waits for R2 (CONSENSUS_NEEDED).
    expect(reply.body?.activity?.status, shown(reply)).not.toBe('ACTIVITY_STATUS_COMPLETED')
    const fresh = await b.submit(...spend(t, b, 100n * ETH))
    expect(fresh.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
  })
}
