// A signing without any spending limit in flight on the embedded database while its key is deleted
// and an ALLOW for its user added, each committed between the signing's admission and its
// transaction (the in-flight hook, not timing). SQLite runs every transaction on its one
// connection in turn, and a signing's transaction reads the policies there, as they are then;
// the caller's key was read at admission only, and a signing outside any limit did not look for
// it again. So a key deleted in that window, with the ALLOW its owner then added, signed: the key
// of before the delete with the policy of after it, a state no moment had (while the key stood
// nothing allowed it; once something did, the key was gone). Now every transaction that reads
// its policies as they are looks for its key too (only a snapshot run of the request's reads,
// which reads the policies as of admission as well, does not).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type Reply } from '../../src/testing/harness.ts'
import { agentGrant } from '../limits/agentGrant.ts'
import { refusal, submitRacing } from './inFlight.ts'

/** The reply, for a failed expectation: the activity's result or failure, or the error. */
const shown = (reply: Reply) => JSON.stringify(reply.body?.activity?.result ?? reply.body)

describe('a key deleted and an ALLOW added while a signing without limits is in flight (SQLite)', () => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness()
  })
  afterAll(async () => {
    await h?.service.close()
  })

  /**
   * An agent user with one API key in a sub-organization with no spending limit and no policy
   * letting it sign (the kit's grant, its limit and ALLOW deleted), and the ALLOW its owner can
   * add again.
   */
  async function ungranted() {
    const agent = await agentGrant(h, { allowance: 10_000n })
    await agent.revoke('policy', 'limit')
    const allow = () =>
      agent.asOwner('create_policy', {
        policyName: 'agent signs again',
        effect: 'EFFECT_ALLOW',
        condition: `activity.resource == 'WALLET' && activity.action == 'SIGN'`,
        consensus: `approvers.all(user, user.id == '${agent.agentUserId}')`,
        notes: '',
      })
    return { ...agent, allow }
  }

  it('runs on the embedded database, whose one connection groups the commits', () => {
    expect(h.service.store.backend.groupsCommits).toBe(true)
  })

  it('the key deleted, then an ALLOW added, in that window: refused, the key is gone (never signed)', async () => {
    const agent = await ungranted()
    // Control: with no ALLOW the agent's key signs nothing.
    expect(refusal(await h.submit(...agent.sign(h, 1n)))[0]).toBe(403)
    const signed = await submitRacing(
      h,
      async () => {
        await agent.revoke('key')
        await agent.allow()
      },
      ...agent.sign(h, 1n),
    )
    expect(refusal(signed), shown(signed)).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
  })

  it('control: the ALLOW alone added in that window, the key kept: signed, as the state committed then allows', async () => {
    const agent = await ungranted()
    const signed = await submitRacing(h, () => agent.allow().then(() => undefined), ...agent.sign(h, 1n))
    expect(signed.status, shown(signed)).toBe(200)
    expect(signed.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
  })
})
