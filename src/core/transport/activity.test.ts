import { describe, expect, it } from 'vitest'
import { approveActivity } from '../actions/activities/approveActivity.ts'
import { createWallet } from '../actions/activities/createWallet.ts'
import { rejectActivity } from '../actions/activities/rejectActivity.ts'
import { getActivity } from '../actions/queries/getActivity.ts'
import { getPolicyEvaluations } from '../actions/queries/getPolicyEvaluations.ts'
import { getWallets } from '../actions/queries/getWallets.ts'
import { ConsensusNeededError } from '../errors.ts'
import { switchSession } from '../session/sessions.ts'
import { createClientFixture } from '../test/fixtures.ts'

describe('activities that need consensus', () => {
  it('surfaces CONSENSUS_NEEDED as a typed error carrying the activity; a second approval executes it', async () => {
    const fx = createClientFixture()
    const { sessions } = await fx.signUpDirect({ users: 2, threshold: 2 })
    const error = await createWallet(fx.client, { walletName: 'Shared', chains: ['ethereum'] }).catch(
      (e) => e,
    )
    expect(error).toBeInstanceOf(ConsensusNeededError)
    expect(error).toMatchObject({
      code: 'CONSENSUS_NEEDED',
      activity: { status: 'ACTIVITY_STATUS_CONSENSUS_NEEDED' },
    })
    const { activity } = error as ConsensusNeededError
    expect((await getWallets(fx.client, {})).wallets).toEqual([])
    const { policyEvaluations } = await getPolicyEvaluations(fx.client, { activityId: activity.id })
    expect(policyEvaluations.length).toBeGreaterThan(0)

    switchSession(fx.client, { sessionId: sessions[1]?.id as string })
    const approved = await approveActivity(fx.client, { fingerprint: activity.fingerprint })
    expect(approved).toMatchObject({ id: activity.id, status: 'ACTIVITY_STATUS_COMPLETED' })
    expect((await getActivity(fx.client, { activityId: activity.id })).activity.status).toBe(
      'ACTIVITY_STATUS_COMPLETED',
    )
    expect((await getWallets(fx.client, {})).wallets.map((w) => w.walletName)).toEqual(['Shared'])
  })

  it('a rejection ends the activity as REJECTED', async () => {
    const fx = createClientFixture()
    const { sessions } = await fx.signUpDirect({ users: 2, threshold: 2 })
    const error = (await createWallet(fx.client, { walletName: 'No' }).catch(
      (e) => e,
    )) as ConsensusNeededError
    switchSession(fx.client, { sessionId: sessions[1]?.id as string })
    const rejected = await rejectActivity(fx.client, { fingerprint: error.activity.fingerprint })
    expect(rejected.status).toBe('ACTIVITY_STATUS_REJECTED')
  })
})
