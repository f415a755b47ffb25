// A policy's outcome is shown to the organization (`get_policy_evaluations`, and the refusal
// itself), so a condition is a reader of the activity it judges: a root user (a parent
// organization's too), with up to 1,000 policies, read a bearer value out of another user's
// waiting or refused activity a character per policy (`activity.params.encryptedSecretApiKey[0..1]
// == 's'`), the value its record never shows (`bearerParameters`). The policies now read
// `activity.params` without the handlers' bearer, secret and sealed-bundle parameters
// (policies/policyParamsOf.ts): the field is absent, so a condition reading it fails the same way
// (OUTCOME_ERROR) whatever the value.
import { describe, expect, it } from 'vitest'
import type { Harness, Json } from '../../src/testing/harness.ts'
import { ETHEREUM_ACCOUNT } from '../../src/testing/harness.ts'
import { delegated } from '../policies/delegated.ts'

const SECRET = 'sealed-secret-api-key-of-the-back-end'

/** Each policy's outcome in the activity's latest evaluation, by policy name. */
async function outcomesOf(h: Harness, asRoot: Json, names: Record<string, string>, activityId: string) {
  const reply = await h.query('get_policy_evaluations', { activityId }, asRoot as never)
  expect(reply.status).toBe(200)
  const evaluations = reply.body.policyEvaluations as {
    policyEvaluations: { policyId?: string; outcome: string }[]
  }[]
  const outcomes = evaluations.at(-1)!.policyEvaluations
  return Object.fromEntries(
    Object.entries(names).map(([name, id]) => [name, outcomes.find((o) => o.policyId === id)?.outcome]),
  )
}

describe("a policy reads no bearer parameter of another user's activity", () => {
  it('one policy per guess learns nothing of a refused or waiting activity’s secret', async () => {
    const t = await delegated([ETHEREUM_ACCOUNT])
    const { h, policy } = t
    const probe = (guess: string) =>
      policy({
        policyName: `guess ${guess}`,
        effect: 'EFFECT_DENY',
        condition: `activity.kind == 'create_fiat_on_ramp_credential' && activity.params.encryptedSecretApiKey[0..1] == '${guess}'`,
      })
    // The right first character, and a wrong one: their outcomes must not tell them apart.
    const ids: Record<string, string> = { right: await probe(SECRET[0]!), wrong: await probe('x') }
    // Control: the rest of its parameters are still read.
    ids.provider = await policy({
      policyName: 'reads the provider',
      effect: 'EFFECT_DENY',
      condition: `activity.kind == 'create_fiat_on_ramp_credential' && activity.params.onrampProvider == 'FIAT_ON_RAMP_PROVIDER_NONE'`,
    })
    const submit = () => {
      h.clock.advance(1)
      return h.submit(
        'create_fiat_on_ramp_credential',
        {
          onrampProvider: 'FIAT_ON_RAMP_PROVIDER_MOONPAY',
          publishableApiKey: 'pk_live',
          encryptedSecretApiKey: SECRET,
        },
        t.asBackend,
      )
    }
    // Refused (no policy allows the back end): every policy is evaluated and recorded.
    const refused = await submit()
    expect(refused.status).toBe(403)
    expect(refused.body.details?.outcome).toBe('OUTCOME_DENY_IMPLICIT')
    const refusedId = refused.body.details?.activityId as string
    expect(await outcomesOf(h, t.asRoot, ids, refusedId)).toEqual({
      right: 'OUTCOME_ERROR',
      wrong: 'OUTCOME_ERROR',
      provider: 'OUTCOME_DENY_IMPLICIT',
    })

    // Waiting for the root user's approval: judged on submission and again on each vote.
    await policy({
      policyName: 'the back end adds credentials with the owner',
      effect: 'EFFECT_ALLOW',
      condition: "activity.kind == 'create_fiat_on_ramp_credential'",
      consensus: `approvers.count() >= 2`,
    })
    const waiting = await submit()
    expect(waiting.body.activity?.status, JSON.stringify(waiting.body)).toBe(
      'ACTIVITY_STATUS_CONSENSUS_NEEDED',
    )
    expect(await outcomesOf(h, t.asRoot, ids, waiting.body.activity.id)).toEqual({
      right: 'OUTCOME_ERROR',
      wrong: 'OUTCOME_ERROR',
      provider: 'OUTCOME_DENY_IMPLICIT',
    })
    // The owner's vote judges it again, from its stored intent (which keeps the secret to run with).
    h.clock.advance(1)
    const vote = await h.submit(
      'approve_activity',
      { fingerprint: waiting.body.activity.fingerprint },
      t.asRoot,
    )
    expect(vote.status).toBe(200)
    expect(await outcomesOf(h, t.asRoot, ids, waiting.body.activity.id)).toEqual({
      right: 'OUTCOME_ERROR',
      wrong: 'OUTCOME_ERROR',
      provider: 'OUTCOME_DENY_IMPLICIT',
    })
    await h.service.close()
  })
})
