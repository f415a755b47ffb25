// A DENY stopped by its own step limit (POLICY_LIMITS.maxSteps, 20,000) refused nothing: its
// evaluation errored (OUTCOME_ERROR), the decision's 400,000 steps were far from spent, and an ALLOW
// decided. A caller sizing a list the DENY reads (an EIP-712 array) put the denied value after
// enough junk to run the DENY out of steps first, and had it signed (found by the audit of
// 30fe3f7b). A DENY out of steps now fails closed: the activity is refused (403
// OUTCOME_DENY_IMPLICIT naming the limit and the policy) unless a DENY matched or the root quorum
// approved it, at submission and on every vote.
import { describe, expect, it } from 'vitest'
import { POLICY_LIMITS } from '../../src/policies/limits.ts'
import { ETHEREUM_ACCOUNT, resultOf, testKey } from '../../src/testing/harness.ts'
import { delegated } from '../policies/delegated.ts'
import { signTyped } from '../policies/typedData.ts'

const BAD = '0xbad0000000000000000000000000000000000bad'

const mail = (recipients: string[]) => ({
  types: {
    EIP712Domain: [
      { name: 'name', type: 'string' },
      { name: 'chainId', type: 'uint256' },
    ],
    Mail: [{ name: 'recipients', type: 'address[]' }],
  },
  primaryType: 'Mail',
  domain: { name: 'Mailer', chainId: 1 },
  message: { recipients },
})

const junkAddress = (i: number) => `0x${i.toString(16).padStart(40, '0')}`
const junk = (count: number) => Array.from({ length: count }, (_, i) => junkAddress(i + 10))

type Reply = Awaited<ReturnType<typeof signTyped>>

/** What a refusal for a DENY out of its own steps says (or what any other answer says instead). */
const judged = (reply: Reply) => ({
  status: reply.status,
  outcome: reply.body.details?.outcome,
  limit: reply.body.details?.limit,
  max: reply.body.details?.max,
  policyName: reply.body.details?.policyName,
  namesTheLimit: String(reply.body.message).includes(`${POLICY_LIMITS.maxSteps} steps`),
})
const outOfSteps = (policyName: string) => ({
  status: 403,
  outcome: 'OUTCOME_DENY_IMPLICIT',
  limit: 'maxSteps',
  max: POLICY_LIMITS.maxSteps,
  policyName,
  namesTheLimit: true,
})

const NEVER_BAD = 'never mail the bad address'
const neverBad = `activity.action == 'SIGN' && eth.eip_712.message.recipients.any(r, r == '${BAD}')`

describe('a DENY that runs out of its own steps', () => {
  it('refuses the denied recipient put after 4,050 junk ones; a short list is judged as before', async () => {
    const t = await delegated([ETHEREUM_ACCOUNT])
    const signWith = t.sub.addresses![0] as string
    await t.allowSigning()
    const denyId = await t.policy({ policyName: NEVER_BAD, effect: 'EFFECT_DENY', condition: neverBad })
    const sign = (recipients: string[], as?: 'root') => {
      t.h.clock.advance(1)
      return as
        ? t.h.submit(
            'sign_raw_payload',
            {
              signWith,
              payload: JSON.stringify(mail(recipients)),
              encoding: 'PAYLOAD_ENCODING_EIP712',
              hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
            },
            t.asRoot,
          )
        : signTyped(t, signWith, mail(recipients))
    }
    // Controls: the bad recipient alone or after a few is refused by the DENY; benign ones are signed.
    expect((await sign([BAD])).body.details?.outcome).toBe('OUTCOME_DENY_EXPLICIT')
    expect((await sign([junkAddress(1), junkAddress(2), BAD])).body.details?.outcome).toBe(
      'OUTCOME_DENY_EXPLICIT',
    )
    const benign = await sign([junkAddress(1), junkAddress(2)])
    expect(benign.body.activity?.status, JSON.stringify(benign.body)).toBe('ACTIVITY_STATUS_COMPLETED')
    // The audit's case: 4,050 junk recipients (5 steps each) run the DENY past 20,000 first.
    const attack = await sign([...junk(4_050), BAD])
    expect(judged(attack), JSON.stringify(attack.body).slice(0, 400)).toEqual(outOfSteps(NEVER_BAD))
    expect(attack.body.details?.policyId).toBe(denyId)
    // Recorded as before: the decision, then the DENY as OUTCOME_ERROR (the published shape).
    const evaluations = await t.h.query(
      'get_policy_evaluations',
      { organizationId: t.sub.organizationId, activityId: attack.body.details.activityId },
      t.asRoot,
    )
    const outcomes = JSON.stringify(evaluations.body)
    expect(outcomes).toContain('"OUTCOME_DENY_IMPLICIT"')
    expect(outcomes).toContain(`{"policyId":"${denyId}","outcome":"OUTCOME_ERROR"}`)
    // So is a list as long with no bad recipient at all: whether the DENY denies it is unknown.
    expect(judged(await sign(junk(4_051)))).toEqual(outOfSteps(NEVER_BAD))
    // The root quorum (the end user alone) is not governed by policies: it signs it.
    const byRoot = await sign([...junk(4_050), BAD], 'root')
    expect(byRoot.body.activity?.status, JSON.stringify(byRoot.body).slice(0, 400)).toBe(
      'ACTIVITY_STATUS_COMPLETED',
    )
    await t.h.service.close()
  }, 120_000)

  it('refuses the denied recipient after 200 junk ones against a list of 60 protected addresses', async () => {
    const t = await delegated([ETHEREUM_ACCOUNT])
    const signWith = t.sub.addresses![0] as string
    await t.allowSigning()
    const protectedList = [BAD, ...Array.from({ length: 59 }, (_, i) => junkAddress(0xdead00 + i))]
    const name = 'never mail a protected address'
    await t.policy({
      policyName: name,
      effect: 'EFFECT_DENY',
      condition: `activity.action == 'SIGN' && eth.eip_712.message.recipients.any(r, r in [${protectedList
        .map((a) => `'${a}'`)
        .join(', ')}])`,
    })
    const control = await signTyped(t, signWith, mail([junkAddress(1), BAD]))
    expect(control.body.details?.outcome).toBe('OUTCOME_DENY_EXPLICIT')
    t.h.clock.advance(1)
    const benign = await signTyped(t, signWith, mail(junk(20)))
    expect(benign.body.activity?.status, JSON.stringify(benign.body)).toBe('ACTIVITY_STATUS_COMPLETED')
    t.h.clock.advance(1)
    expect(judged(await signTyped(t, signWith, mail([...junk(200), BAD])))).toEqual(outOfSteps(name))
    await t.h.service.close()
  }, 120_000)

  it('lets a DENY that matched refuse explicitly, and does not let an ALLOW out of steps allow', async () => {
    const t = await delegated([ETHEREUM_ACCOUNT])
    const signWith = t.sub.addresses![0] as string
    const GOOD = junkAddress(0x600d)
    // The only ALLOW reads the list: out of steps, it allows nothing (and no DENY is named).
    await t.policy({
      policyName: 'mail the good address',
      effect: 'EFFECT_ALLOW',
      condition: `activity.action == 'SIGN' && eth.eip_712.message.recipients.any(r, r == '${GOOD}')`,
    })
    t.h.clock.advance(1)
    expect((await signTyped(t, signWith, mail([GOOD]))).body.activity?.status).toBe(
      'ACTIVITY_STATUS_COMPLETED',
    )
    t.h.clock.advance(1)
    const long = await signTyped(t, signWith, mail([...junk(4_050), GOOD]))
    expect(judged(long)).toEqual({
      status: 403,
      outcome: 'OUTCOME_DENY_IMPLICIT',
      limit: undefined,
      max: undefined,
      policyName: undefined,
      namesTheLimit: false,
    })
    // A DENY out of steps beside one that matches: the match is what refuses it.
    await t.policy({ policyName: NEVER_BAD, effect: 'EFFECT_DENY', condition: neverBad })
    await t.policy({
      policyName: 'never sign for the Mailer',
      effect: 'EFFECT_DENY',
      condition: "activity.action == 'SIGN' && eth.eip_712.domain.name == 'Mailer'",
    })
    t.h.clock.advance(1)
    const both = await signTyped(t, signWith, mail([...junk(4_050), GOOD]))
    expect({ status: both.status, outcome: both.body.details?.outcome, message: both.body.message }).toEqual({
      status: 403,
      outcome: 'OUTCOME_DENY_EXPLICIT',
      message: "sign_raw_payload is denied by policy 'never sign for the Mailer'",
    })
    await t.h.service.close()
  }, 120_000)

  it('does not let a vote allow an activity waiting for consensus once a DENY runs out of steps on it', async () => {
    const t = await delegated([ETHEREUM_ACCOUNT])
    const signWith = t.sub.addresses![0] as string
    const approver = testKey()
    t.h.clock.advance(1)
    const approverId = resultOf(
      'create_users',
      await t.h.submit(
        'create_users',
        {
          users: [
            {
              userName: 'approver',
              apiKeys: [approver.apiKey('approver')],
              authenticators: [],
              oauthProviders: [],
              userTags: [],
            },
          ],
        },
        t.asRoot,
      ),
    ).userIds[0] as string
    await t.policy({
      policyName: 'back end signs with the approver',
      effect: 'EFFECT_ALLOW',
      condition: "activity.action == 'SIGN'",
      consensus: `approvers.any(u, u.id == '${approverId}')`,
    })
    t.h.clock.advance(1)
    const waiting = await signTyped(t, signWith, mail([...junk(4_050), BAD]))
    expect(waiting.body.activity?.status, JSON.stringify(waiting.body).slice(0, 400)).toBe(
      'ACTIVITY_STATUS_CONSENSUS_NEEDED',
    )
    // The DENY is added while it waits; the approver's vote meets the ALLOW's consensus.
    await t.policy({ policyName: NEVER_BAD, effect: 'EFFECT_DENY', condition: neverBad })
    t.h.clock.advance(1)
    const voted = await t.h.submit(
      'approve_activity',
      { fingerprint: waiting.body.activity.fingerprint },
      { ...t.at, as: approver },
    )
    expect(voted.status, JSON.stringify(voted.body).slice(0, 400)).toBe(200)
    const { body } = await t.h.query('get_activity', { activityId: waiting.body.activity.id }, t.asBackend)
    // Not signed: it still waits for the root quorum, which policies do not bind.
    expect(body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')
    await t.h.service.close()
  }, 120_000)
})
