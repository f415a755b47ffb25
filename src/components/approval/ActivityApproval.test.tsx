import { render, screen } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it } from 'vitest'
import { approveActivity } from '../../core/actions/activities/approveActivity.ts'
import { createPolicy } from '../../core/actions/activities/createPolicy.ts'
import { createWallet } from '../../core/actions/activities/createWallet.ts'
import { getActivity } from '../../core/actions/queries/getActivity.ts'
import { getWallets } from '../../core/actions/queries/getWallets.ts'
import { switchSession } from '../../core/session/sessions.ts'
import { createClientFixture } from '../../core/test/fixtures.ts'
import { LatchkeyProvider } from '../../react/index.ts'
import { ActivityApproval } from './ActivityApproval.tsx'

describe('<ActivityApproval/>', () => {
  it('shows an activity waiting for consensus and approving it runs it', async () => {
    const user = userEvent.setup()
    const fixture = await createClientFixture()
    const { sessions } = await fixture.signUpDirect({ users: 2, threshold: 2 })
    const error = await createWallet(fixture.client, { walletName: 'Treasury', chains: ['ethereum'] }).catch(
      (e) => e,
    )
    expect(error).toMatchObject({ code: 'CONSENSUS_NEEDED' })
    const activityId = error.details.activityId as string
    switchSession(fixture.client, { sessionId: sessions[1]!.id })
    const voted: string[] = []
    render(
      <LatchkeyProvider client={fixture.client}>
        <ActivityApproval activityId={activityId} onVoted={(v) => voted.push(v)} />
      </LatchkeyProvider>,
    )
    expect(await screen.findByText('Create wallet')).toBeTruthy()
    expect(screen.getByText('Consensus needed')).toBeTruthy()
    expect(screen.getByText('1 so far')).toBeTruthy()
    expect(await screen.findByText('The root users')).toBeTruthy()
    await user.click(screen.getByRole('button', { name: 'Approve' }))
    expect(await screen.findByText('You approved this action.', undefined, { timeout: 10_000 })).toBeTruthy()
    expect(voted).toEqual(['approved'])
    const { wallets } = await getWallets(fixture.client, {})
    expect(wallets.map((w) => w.walletName)).toEqual(['Treasury'])
  })

  it('names the policy that asked for consensus', async () => {
    const fixture = await createClientFixture()
    const { sessions } = await fixture.signUpDirect({ users: 2, threshold: 2 })
    // Two root users must agree (root quorum), on the policy too; it waits for three approvers.
    const pending = await createPolicy(fixture.client, {
      policyName: 'Three approve new wallets',
      effect: 'EFFECT_ALLOW',
      condition: "activity.resource == 'WALLET' && activity.action == 'CREATE'",
      consensus: 'approvers.count() >= 3',
      notes: '',
    }).catch((e) => e)
    switchSession(fixture.client, { sessionId: sessions[1]!.id })
    const { activity } = await getActivity(fixture.client, { activityId: pending.details.activityId })
    await approveActivity(fixture.client, { fingerprint: activity.fingerprint })
    switchSession(fixture.client, { sessionId: sessions[0]!.id })
    const error = await createWallet(fixture.client, { walletName: 'Ops', chains: ['ethereum'] }).catch(
      (e) => e,
    )
    expect(error).toMatchObject({ code: 'CONSENSUS_NEEDED' })
    switchSession(fixture.client, { sessionId: sessions[1]!.id })
    render(
      <LatchkeyProvider client={fixture.client}>
        <ActivityApproval activityId={error.details.activityId as string} />
      </LatchkeyProvider>,
    )
    expect(await screen.findByText('Three approve new wallets', undefined, { timeout: 10_000 })).toBeTruthy()
    expect(screen.getByText('Asked by')).toBeTruthy()
  })
})
