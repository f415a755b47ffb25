// What the tests of a root quorum and the votes on a waiting activity share: raising the quorum, a
// policy that lets plain users sign in, an activity left waiting, a vote, and the store reads a
// request makes.
import { expect, vi } from 'vitest'
import { Transaction } from '../../src/kernel/store/Transaction.ts'
import { type Harness, resultOf, type Stamper } from '../../src/testing/harness.ts'

/** Sets the root quorum to `threshold` of `userIds` (`update_root_quorum` stamped by `as`, which must complete). */
export async function raiseQuorum(
  h: Harness,
  as: Stamper,
  organizationId: string,
  userIds: string[],
  threshold: number,
): Promise<void> {
  h.clock.advance(1)
  resultOf(
    'update_root_quorum',
    await h.submit('update_root_quorum', { threshold, userIds }, { as, organizationId }),
  )
}

/** A policy ('users sign in') that allows every user's `stamp_login`. */
export async function allowSignIns(h: Harness, as: Stamper, organizationId: string): Promise<void> {
  h.clock.advance(1)
  resultOf(
    'create_policy',
    await h.submit(
      'create_policy',
      {
        policyName: 'users sign in',
        effect: 'EFFECT_ALLOW',
        condition: "activity.type == 'ACTIVITY_TYPE_STAMP_LOGIN'",
      },
      { as, organizationId },
    ),
  )
}

/** A `create_wallet` stamped by `as` that must wait for votes (CONSENSUS_NEEDED); its reply. */
export async function waitingWallet(h: Harness, as: Stamper, organizationId: string) {
  h.clock.advance(1)
  const pending = await h.submit('create_wallet', { walletName: 'w', accounts: [] }, { as, organizationId })
  expect(pending.body.activity.status, JSON.stringify(pending.body)).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
  return pending
}

/** `as`'s approval (or rejection) of the activity with `fingerprint`; its reply. */
export async function vote(
  h: Harness,
  as: Stamper,
  organizationId: string,
  fingerprint: string,
  selection: 'approve' | 'reject' = 'approve',
) {
  h.clock.advance(1)
  return h.submit(`${selection}_activity`, { fingerprint }, { as, organizationId })
}

/** What `run` returns, and the reads (`get` and `findBy` in transactions) it made. */
export async function withReads<T>(run: () => Promise<T>): Promise<{ result: T; reads: number }> {
  const get = vi.spyOn(Transaction.prototype, 'get')
  const findBy = vi.spyOn(Transaction.prototype, 'findBy')
  const result = await run()
  const reads = get.mock.calls.length + findBy.mock.calls.length
  get.mockRestore()
  findBy.mockRestore()
  return { result, reads }
}
