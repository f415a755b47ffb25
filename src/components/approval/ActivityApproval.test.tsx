import { render, screen } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it } from 'vitest'
import { createWallet } from '../../core/actions/activities/createWallet.ts'
import { getWallets } from '../../core/actions/queries/getWallets.ts'
import { switchSession } from '../../core/session/sessions.ts'
import { createClientFixture } from '../../core/test/fixtures.ts'
import { LatchkeyProvider } from '../../react/index.ts'
import { ActivityApproval } from './ActivityApproval.tsx'

describe('<ActivityApproval/>', () => {
  it('shows an activity waiting for consensus and approving it runs it', async () => {
    const user = userEvent.setup()
    const fixture = createClientFixture()
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
    await user.click(screen.getByRole('button', { name: 'Approve' }))
    expect(await screen.findByText('You approved this action.', undefined, { timeout: 10_000 })).toBeTruthy()
    expect(voted).toEqual(['approved'])
    const { wallets } = await getWallets(fixture.client, {})
    expect(wallets.map((w) => w.walletName)).toEqual(['Treasury'])
  })
})
