import { render, screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it } from 'vitest'
import { approveActivity } from '../../core/actions/activities/approveActivity.ts'
import { confirmTotpFactor } from '../../core/actions/activities/confirmTotpFactor.ts'
import { createMfaPolicy } from '../../core/actions/activities/createMfaPolicy.ts'
import { createPolicy } from '../../core/actions/activities/createPolicy.ts'
import { createTotpFactor } from '../../core/actions/activities/createTotpFactor.ts'
import { createWallet } from '../../core/actions/activities/createWallet.ts'
import { getActivity } from '../../core/actions/queries/getActivity.ts'
import { getWallets } from '../../core/actions/queries/getWallets.ts'
import { switchSession } from '../../core/session/sessions.ts'
import { createClientFixture } from '../../core/test/fixtures.ts'
import { totpCode } from '../../core/test/totpCode.ts'
import { submitActivity } from '../../core/transport/activity.ts'
import { LatchkeyProvider } from '../../react/index.ts'
import { ActivityApproval, intentFields } from './ActivityApproval.tsx'

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
    // What the approver is asked to approve, and who asked: not the type alone.
    const details = screen.getByRole('region', { name: 'What it does' })
    expect(within(details).getByText('walletName')).toBeTruthy()
    expect(within(details).getByText('Treasury')).toBeTruthy()
    expect(screen.getByText(/· by /)).toBeTruthy()
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

  it("a vote its voter's own MFA policy covers waits for their authenticator code, then counts", async () => {
    const user = userEvent.setup()
    const fixture = await createClientFixture()
    const { sessions, userIds } = await fixture.signUpDirect({ users: 2 })
    // The second root user guards new wallets with an authenticator app; then both must agree.
    switchSession(fixture.client, { sessionId: sessions[1]!.id })
    const { factorId, secret } = await createTotpFactor(fixture.client, { factorName: 'Phone' })
    await confirmTotpFactor(fixture.client, { factorId, code: totpCode(secret) })
    await createMfaPolicy(fixture.client, {
      mfaPolicyName: 'new wallets need a code',
      condition: "activity.resource == 'WALLET' && activity.action == 'CREATE'",
      requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] }],
      order: 0,
    })
    switchSession(fixture.client, { sessionId: sessions[0]!.id })
    const quorum = await submitActivity(fixture.client, 'update_root_quorum', { threshold: 2, userIds })
    expect(quorum.status).toBe('ACTIVITY_STATUS_COMPLETED')
    // The first asks for a wallet; the second's approval is their consent to it.
    const error = await createWallet(fixture.client, { walletName: 'Vault', chains: ['ethereum'] }).catch(
      (e) => e,
    )
    expect(error).toMatchObject({ code: 'CONSENSUS_NEEDED' })
    switchSession(fixture.client, { sessionId: sessions[1]!.id })
    const voted: string[] = []
    render(
      <LatchkeyProvider client={fixture.client}>
        <ActivityApproval activityId={error.details.activityId as string} onVoted={(v) => voted.push(v)} />
      </LatchkeyProvider>,
    )
    await user.click(await screen.findByRole('button', { name: 'Approve' }, { timeout: 10_000 }))
    await screen.findByRole('textbox', { name: 'Authenticator code' }, { timeout: 10_000 })
    expect(screen.queryByText('You approved this action.')).toBeNull()
    expect((await getWallets(fixture.client, {})).wallets).toEqual([])
    // Cancelling leaves the activity waiting, with no error shown; approving again asks again.
    await user.click(screen.getByRole('button', { name: 'Cancel' }))
    expect(screen.queryByRole('alert')).toBeNull()
    await user.click(screen.getByRole('button', { name: 'Approve' }))
    const field = await screen.findByRole('textbox', { name: 'Authenticator code' }, { timeout: 10_000 })
    // The confirmation spent this step's code: the next step's.
    await user.type(field, `${totpCode(secret, Date.now() + 30_000)}{Enter}`)
    expect(await screen.findByText('You approved this action.', undefined, { timeout: 10_000 })).toBeTruthy()
    expect(voted).toEqual(['approved'])
    expect((await getWallets(fixture.client, {})).wallets.map((w) => w.walletName)).toEqual(['Vault'])
  })

  it('lists the intent as text: long values keep their start and end, objects as JSON', () => {
    const payload = `0x${'ab'.repeat(300)}`
    expect(
      intentFields({
        signRawPayloadIntentV2: {
          signWith: '0x00000000000000000000000000000000000000d1',
          payload,
          hashFunction: 'HASH_FUNCTION_NO_OP',
          accounts: [{ curve: 'CURVE_SECP256K1' }],
          tags: ['a', 'b'],
          empty: '',
        },
      }),
    ).toEqual([
      ['signWith', '0x00000000000000000000000000000000000000d1'],
      ['payload', `${payload.slice(0, 200)}…${payload.slice(-200)} (602)`],
      ['hashFunction', 'HASH_FUNCTION_NO_OP'],
      ['accounts', '[{"curve":"CURVE_SECP256K1"}]'],
      ['tags', 'a, b'],
    ])
    expect(intentFields({ other: 1 })).toEqual([])
  })
})
