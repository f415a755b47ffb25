// A follower lock group (a chain, GroupCommit) decided on the policies the chain's first group read
// after the lock: a DENY the owner committed after that read, before the agent's next signing was
// even admitted, was ignored for that signing (judged on policies older than its own admission).
// A follower now reads its own, behind the commit of the group before it.
//
// The credential-gone check in a chain's follower group: a limited signing is refused once its key
// is gone as of after the spend lock. A follower group (GroupCommit's chains, up to 100 ms) decided
// on the read of the chain's first group: when that group was begun by the same caller, its
// apiKeys/users rows came from that older read, and a signing whose user was deleted (committed on
// another instance) after its admission and before its turn signed. A follower now reads its own.
// Begun by another caller (the control), the key was looked up and refused already.
import { describe, expect, it } from 'vitest'
import type { Harness } from '../../src/testing/harness.ts'
import { usePostgres, useTwoInstances } from '../support/twoInstances.ts'
import { agentGrant } from './agentGrant.ts'

const postgres = usePostgres()

const ALLOWANCE = 10n ** 18n

/** The kit's agent grant under a 1 ETH a day allowance, and the owner's freeze of the agent (a DENY). */
async function granted(a: Harness) {
  const agent = await agentGrant(a, { allowance: ALLOWANCE, completed: false })
  const deny = () =>
    agent.asOwner('create_policy', {
      policyName: 'freeze the agent',
      effect: 'EFFECT_DENY',
      condition: `activity.resource == 'WALLET' && activity.action == 'SIGN'`,
      notes: '',
    })
  return { ...agent, deny }
}

/** Runs `during` once, right after the next lock group's read (the one that reads the limits). */
function afterGroupRead(h: Harness, during: () => Promise<void>) {
  const store = h.service.runtime.store as unknown as {
    queries: { lookupMany: (...args: unknown[]) => Promise<unknown> }
  }
  const queries = store.queries
  const original = queries.lookupMany
  let armed = true
  queries.lookupMany = async function (this: unknown, ...args: unknown[]) {
    const result = await original.apply(this, args)
    const lookups = args[1] as { table: string }[]
    if (armed && lookups.some((lookup) => lookup.table === 'spendingLimitUsage')) {
      armed = false
      await during()
    }
    return result
  } as typeof original
  return () => {
    queries.lookupMany = original
  }
}

/** Runs `during` once, as the next request on `h` is about to enter its activity transaction (after admission). */
function beforeNextTransaction(h: Harness, during: () => Promise<void>): Promise<void> {
  const timings = h.service.runtime.timings
  const original = timings.time.bind(timings)
  return new Promise((queued) => {
    timings.time = (async (stage: string, work: () => Promise<unknown>) => {
      if (stage !== 'transaction') return original(stage as never, work)
      timings.time = original
      await during()
      const running = original(stage as never, work)
      queued()
      return running
    }) as typeof timings.time
  })
}

describe('the agent deleted while its signing waits for a chain of lock groups (PostgreSQL, two instances)', () => {
  const pair = useTwoInstances('follower_key_gone', { postgres })

  it.each([false, true])(
    'its key gone before the lock, a follower refuses it (401), as a group of its own does (group begun by the same caller: %s)',
    async (sameCaller) => {
      const { a, b } = pair
      const groups = () =>
        (b.service.runtime.store as unknown as { lockGroups: { counts: { followed: number } } }).lockGroups
          .counts
      const outcomes: { followed: boolean; status: number }[] = []
      for (let round = 0; round < 8; round++) {
        const agent = await granted(a)
        expect((await b.submit(...agent.sign(b, 1000n))).status).toBe(200)
        const followedBefore = groups().followed
        let second: Promise<Awaited<ReturnType<Harness['submit']>>> | undefined
        const restore = afterGroupRead(b, async () => {
          // The owner's signing's group has read. The agent's signing is admitted on B (its key
          // stands), its user is deleted on A (committed), then it queues behind the owner's group.
          const queued = beforeNextTransaction(b, async () => {
            await agent.revoke('user')
          })
          second = b.submit(...agent.sign(b, 1000n))
          await queued
          await new Promise((resolve) => setTimeout(resolve, 5))
        })
        try {
          expect(
            (await b.submit(...(sameCaller ? agent.sign(b, 1000n) : agent.sign(b, 1000n, agent.owner))))
              .status,
          ).toBe(200)
        } finally {
          restore()
        }
        const signed = await second!
        outcomes.push({ followed: groups().followed > followedBefore, status: signed.status })
      }
      // Safe: refused, the key is gone as of the lock (as revokeWhileSigning's "the user deleted
      // alone in that window" asserts for a group of its own).
      expect(
        outcomes.filter((o) => o.status === 200),
        JSON.stringify(outcomes),
      ).toEqual([])
    },
  )
})

/** Resolves once the next request reaches its activity transaction on `h`. */
function nextTransaction(h: Harness): Promise<void> {
  const timings = h.service.runtime.timings
  const original = timings.time.bind(timings)
  return new Promise((reached) => {
    timings.time = (async (stage: string, work: () => Promise<unknown>) => {
      if (stage === 'transaction') {
        timings.time = original
        reached()
      }
      return original(stage as never, work)
    }) as typeof timings.time
  })
}

describe('a DENY committed while a chain of lock groups runs (PostgreSQL, two instances)', () => {
  const pair = useTwoInstances('follower_own_read', { postgres })

  it('a signing admitted after the DENY committed is refused by it, also when it runs as a follower group', async () => {
    const { a, b } = pair
    const groups = () =>
      (b.service.runtime.store as unknown as { lockGroups: { counts: { followed: number } } }).lockGroups
        .counts
    const outcomes: { followed: boolean; status: number; after: number }[] = []
    // Eight tries (a follower forms when the second signing queues within the chain's 100 ms).
    for (let round = 0; round < 8; round++) {
      const agent = await granted(a)
      expect((await b.submit(...agent.sign(b, 1000n))).status).toBe(200)
      const followedBefore = groups().followed
      let second: Promise<Awaited<ReturnType<Harness['submit']>>> | undefined
      const restore = afterGroupRead(b, async () => {
        // After the group's read (policies without the DENY): the owner freezes the agent,
        // committed on A; then the agent's next signing is admitted on B (its admission reads
        // hold the DENY) and queues behind the running group.
        await agent.deny()
        const queued = nextTransaction(b)
        second = b.submit(...agent.sign(b, 1000n))
        await queued
        await new Promise((resolve) => setTimeout(resolve, 5))
      })
      try {
        expect((await b.submit(...agent.sign(b, 1000n))).status).toBe(200)
      } finally {
        restore()
      }
      const signed = await second!
      // Control: a signing afterwards, in a group of its own, is refused by the DENY.
      const after = (await b.submit(...agent.sign(b, 1000n))).status
      outcomes.push({ followed: groups().followed > followedBefore, status: signed.status, after })
    }
    expect(outcomes.map((o) => o.after)).toEqual(outcomes.map(() => 403))
    // Safe: every signing admitted after the DENY committed is refused (403). Found: those that ran
    // as a chain's follower signed (200), judged on the policies the chain's first group read.
    expect(
      outcomes.filter((o) => o.status === 200),
      JSON.stringify(outcomes),
    ).toEqual([])
  })
})
