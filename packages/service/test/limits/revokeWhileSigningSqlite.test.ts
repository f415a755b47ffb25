// The SQLite twin of revokeWhileSigning.test.ts: an agent's signature under a spending limit in
// flight on the embedded database while its owner revokes the agent, each step committed between
// the signing's admission and its transaction (the in-flight hook, not timing). SQLite runs every
// transaction on its one connection in turn, and a signing's transaction reads its limits, the
// policies and the user tags there; the caller's key and user were read at admission only. So a
// signing whose key went in that window (the agent's user or key deleted) signed, and was counted
// under a limit that was still there: decided on a key nobody had any more, after the revoke had
// committed; with the limit deleted too and the ALLOW policy kept, it signed 100 ETH uncounted
// under a 10,000 wei allowance. Now a signing under a limit (asked right after admission, so a limit
// deleted in the window still counts as one) looks for its key in its own transaction, as on
// PostgreSQL after the spend lock: refused once the key is gone; signed uncounted only where a
// committed state had the key and the policy with no limit (the limit removed alone).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type Reply } from '../../src/testing/harness.ts'
import { refusal, submitRacing } from '../security/inFlight.ts'
import { agentGrant } from './agentGrant.ts'

const ETH = 10n ** 18n
const ALLOWANCE = 10_000n

/**
 * A sub-organization whose agent signs on chain 1 under an allowance of 10,000 wei a day
 * (docs/agents.md), the agent in a tag the policy's consensus names too.
 */
const granted = (h: Harness) => agentGrant(h, { allowance: ALLOWANCE, tagged: true })

/** The reply, for a failed expectation: the activity's result or failure, or the error. */
const shown = (reply: Reply) => JSON.stringify(reply.body?.activity?.result ?? reply.body)

describe('revoking an agent while a signature of it is in flight (SQLite)', () => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness()
  })
  afterAll(async () => {
    await h?.service.close()
  })

  it('runs on the embedded database, whose one connection groups the commits', () => {
    expect(h.service.store.backend.groupsCommits).toBe(true)
    expect(h.service.store.backend.name).toBe('SQLite')
  })

  it('the whole revoke committed between admission and the transaction: refused, the key is gone (never 100 ETH signed)', async () => {
    const agent = await granted(h)
    // Control: within the allowance signs; 100 ETH is over it.
    expect((await h.submit(...agent.sign(h, 1000n))).status).toBe(200)
    expect(refusal(await h.submit(...agent.sign(h, 100n * ETH)))).toEqual([429, 'SPENDING_LIMIT_EXCEEDED'])
    let revoked = false
    const signed = await submitRacing(
      h,
      async () => {
        await agent.revoke()
        revoked = true
      },
      ...agent.sign(h, 100n * ETH),
    )
    expect(revoked).toBe(true)
    expect(refusal(signed), shown(signed)).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
    expect(refusal(await h.submit(...agent.sign(h, 1n)))[0]).toBe(401)
  })

  it('the user deleted alone in that window: refused, the key is gone, nothing counted', async () => {
    const agent = await granted(h)
    expect((await h.submit(...agent.sign(h, 1000n))).status).toBe(200)
    const signed = await submitRacing(h, () => agent.revoke('user'), ...agent.sign(h, 1000n))
    expect(refusal(signed), shown(signed)).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
    expect(await agent.used()).toEqual(['1000'])
  })

  it("the agent's key deleted alone in that window: refused, nothing counted", async () => {
    const agent = await granted(h)
    expect((await h.submit(...agent.sign(h, 1000n))).status).toBe(200)
    const signed = await submitRacing(h, () => agent.revoke('key'), ...agent.sign(h, 1000n))
    expect(refusal(signed), shown(signed)).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
    expect(await agent.used()).toEqual(['1000'])
  })

  it('the user and the limit deleted in that window, the policy kept: refused, the key is gone (never 100 ETH signed uncounted)', async () => {
    const agent = await granted(h)
    const signed = await submitRacing(h, () => agent.revoke('user', 'limit'), ...agent.sign(h, 100n * ETH))
    expect(refusal(signed), shown(signed)).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
  })

  it("the agent's key and the limit deleted in that window, the policy kept: refused (never 100 ETH signed uncounted)", async () => {
    const agent = await granted(h)
    const signed = await submitRacing(h, () => agent.revoke('key', 'limit'), ...agent.sign(h, 100n * ETH))
    expect(refusal(signed), shown(signed)).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
  })

  it('the policy deleted alone in that window: refused by the policies as the transaction reads them', async () => {
    const agent = await granted(h)
    const signed = await submitRacing(h, () => agent.revoke('policy'), ...agent.sign(h, 1000n))
    expect(signed.status, shown(signed)).toBe(403)
    expect(await agent.used()).toEqual(['0'])
  })

  it('the policy and the limit deleted in that window, the key kept: refused (never 100 ETH signed uncounted)', async () => {
    const agent = await granted(h)
    const signed = await submitRacing(h, () => agent.revoke('policy', 'limit'), ...agent.sign(h, 100n * ETH))
    expect(signed.status, shown(signed)).toBe(403)
  })

  it('a DENY added in that window: refused by it', async () => {
    const agent = await granted(h)
    const signed = await submitRacing(h, () => agent.revoke('deny'), ...agent.sign(h, 1000n))
    expect(refusal(signed), shown(signed)).toEqual([403, 'PERMISSION_DENIED'])
    expect(await agent.used()).toEqual(['0'])
  })

  it("the agent taken out of the tag the policy's consensus names in that window: not signed, it waits for approvers", async () => {
    const agent = await granted(h)
    const signed = await submitRacing(h, () => agent.revoke('tag'), ...agent.sign(h, 1000n))
    expect(signed.body?.activity?.status, shown(signed)).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    expect(await agent.used()).toEqual(['0'])
  })

  it('control: the limit alone deleted in that window, key and policy kept: signed uncounted, as the state committed then allows', async () => {
    const agent = await granted(h)
    const signed = await submitRacing(h, () => agent.revoke('limit'), ...agent.sign(h, 100n * ETH))
    expect(signed.status, shown(signed)).toBe(200)
    expect(await agent.used()).toEqual([])
  })

  it('control: the allowance spent in that window is seen by the signing', async () => {
    const agent = await granted(h)
    const signed = await submitRacing(
      h,
      async () => {
        expect((await h.submit(...agent.sign(h, ALLOWANCE))).status).toBe(200)
      },
      ...agent.sign(h, 1n),
    )
    expect(refusal(signed), shown(signed)).toEqual([429, 'SPENDING_LIMIT_EXCEEDED'])
    expect(await agent.used()).toEqual([String(ALLOWANCE)])
  })
})
