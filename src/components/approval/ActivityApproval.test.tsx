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
import { getWalletAccounts } from '../../core/actions/queries/getWalletAccounts.ts'
import { getWallets } from '../../core/actions/queries/getWallets.ts'
import { switchSession } from '../../core/session/sessions.ts'
import { createClientFixture } from '../../core/test/fixtures.ts'
import { totpCode } from '../../core/test/totpCode.ts'
import { submitActivity } from '../../core/transport/activity.ts'
import { LatchkeyProvider } from '../../react/index.ts'
import { en } from '../i18n/en.ts'
import { ActivityApproval } from './ActivityApproval.tsx'
import { intentFields } from './intentFields.ts'

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

  it("shows the type's parameters first and in full, and a requester's added fields apart, hidden characters marked", async () => {
    const user = userEvent.setup()
    const fixture = await createClientFixture()
    const { sessions, userIds } = await fixture.signUpDirect({ users: 2 })
    const { walletId } = await createWallet(fixture.client, { walletName: 'Treasury', chains: ['ethereum'] })
    const { accounts } = await getWalletAccounts(fixture.client, { walletId })
    const signWith = accounts[0]!.address
    const quorum = await submitActivity(fixture.client, 'update_root_quorum', { threshold: 2, userIds })
    expect(quorum.status).toBe('ACTIVITY_STATUS_COMPLETED')
    // The service stores parameters as submitted: 16 decoys named like the real fields come first.
    const realPayload = `0x${'ee'.repeat(32)}`
    const decoys: Record<string, string> = {
      'signWith\u200d': '0x00000000000000000000000000000000000000d1',
      'payload\u200d': `0x${'00'.repeat(32)}`,
      'note\u200d': 'monthly payroll, approved by finance',
    }
    for (let i = 0; Object.keys(decoys).length < 16; i++) decoys[`memo${i}`] = 'ok'
    const pending = await submitActivity(fixture.client, 'sign_raw_payload', {
      ...decoys,
      hashFunction: 'HASH_FUNCTION_NO_OP',
      payload: realPayload,
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      signWith,
    } as never)
    expect(pending.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED')

    switchSession(fixture.client, { sessionId: sessions[1]!.id })
    render(
      <LatchkeyProvider client={fixture.client}>
        <ActivityApproval activityId={pending.id} />
      </LatchkeyProvider>,
    )
    expect(await screen.findByRole('button', { name: 'Approve' }, { timeout: 10_000 })).toBeTruthy()
    const details = screen.getByRole('region', { name: 'What it does' })
    // First, whole and in the protocol's order (not the order submitted): what will be signed.
    const [known] = [...details.querySelectorAll('dl')]
    expect(pairs(known!)).toEqual([
      ['signWith', signWith],
      ['payload', realPayload],
      ['encoding', 'PAYLOAD_ENCODING_HEXADECIMAL'],
      ['hashFunction', 'HASH_FUNCTION_NO_OP'],
    ])
    // Then the decoys, apart, each zero-width joiner shown as a mark, with a warning saying so.
    const other = within(details).getByRole('region', {
      name: 'Other fields, not parameters of this action (16)',
    })
    expect(other.contains(known!)).toBe(false)
    expect(within(details).getByRole('status').textContent).toBe(en.hiddenCharsWarning)
    expect(within(other).getByText(en.approvalOtherNote)).toBeTruthy()
    // Each mark reads "U+200D", and "hidden character U+200D" to a screen reader.
    const decoyPairs = Object.entries(decoys).map(([name, value]) => [
      name.replace('\u200d', `${en.hiddenChar} U+200D`),
      value,
    ])
    expect(pairs(other.querySelector('dl')!)).toEqual(decoyPairs.slice(0, 8))
    expect(other.querySelectorAll('[data-lk-hidden-char]')).toHaveLength(3)
    expect(other.querySelectorAll('dt[data-lk-hidden]')).toHaveLength(3)
    // None dropped: the rest are a click away.
    await user.click(within(other).getByRole('button', { name: 'Show all (8 more)' }))
    expect(pairs(other.querySelector('dl')!)).toEqual(decoyPairs)
    expect(within(other).queryByRole('button')).toBeNull()
    expect(document.activeElement).toBe(within(other).getByRole('heading'))
  })

  it("reads the intent by the type's parameters: in full, in order, the shape the service reads; the rest apart", () => {
    const payload = `0x${'ab'.repeat(300)}`
    expect(
      intentFields('ACTIVITY_TYPE_SIGN_RAW_PAYLOADS', {
        signRawPayloadsIntent: {
          tags: ['a', 'b'],
          hashFunction: 'HASH_FUNCTION_NO_OP',
          payloads: [payload, '0x01'],
          signWith: '0x00000000000000000000000000000000000000d1',
          empty: '',
          accounts: [{ curve: 'CURVE_SECP256K1' }],
          blob: payload,
        },
      }),
    ).toEqual({
      known: [
        { name: 'signWith', value: '0x00000000000000000000000000000000000000d1', hidden: false },
        { name: 'payloads', value: `${payload}, 0x01`, hidden: false },
        { name: 'hashFunction', value: 'HASH_FUNCTION_NO_OP', hidden: false },
      ],
      other: [
        { name: 'tags', value: 'a, b', hidden: false },
        { name: 'empty', value: '""', hidden: false },
        { name: 'accounts', value: '[{"curve":"CURVE_SECP256K1"}]', hidden: false },
        { name: 'blob', value: `${payload.slice(0, 200)}…${payload.slice(-200)} (602)`, hidden: false },
      ],
      knownType: true,
    })
    // A V2 send reads `calls`: a top-level `to` (V1's shape) is not where the value goes.
    const call = { to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', value: '1' }
    const v2 = intentFields('ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2', {
      ethSendTransactionIntentV2: {
        to: '0x00000000000000000000000000000000000000d1',
        from: '0xf',
        caip2: 'eip155:1',
        calls: [call],
      },
    })
    expect(v2.known.map((f) => f.name)).toEqual(['from', 'caip2', 'calls'])
    expect(v2.other.map((f) => f.name)).toEqual(['to'])
    // V1, under its own intent key: its one inline call.
    const v1 = intentFields('ACTIVITY_TYPE_ETH_SEND_TRANSACTION', {
      ethSendTransactionIntent: { from: '0xf', caip2: 'eip155:1', ...call },
    })
    expect([v1.known.map((f) => f.name), v1.other]).toEqual([['from', 'caip2', 'to', 'value'], []])
    // A right-to-left override in a value, a zero-width space in a nested name: both flagged.
    const flagged = intentFields('ACTIVITY_TYPE_CREATE_WALLET', {
      createWalletIntent: { walletName: 'Payroll \u202etxt.exe', accounts: [{ 'path\u200b': "m/44'" }] },
    })
    expect(flagged.known.map((f) => [f.name, f.hidden])).toEqual([
      ['walletName', true],
      ['accounts', true],
    ])
    // A type the kit does not know: every field, as sent, none called a parameter.
    expect(
      intentFields('ACTIVITY_TYPE_FUTURE_THING', { futureThingIntent: { a: '1', 'b\u2066': '2' } }),
    ).toEqual({
      known: [],
      other: [
        { name: 'a', value: '1', hidden: false },
        { name: 'b\u2066', value: '2', hidden: true },
      ],
      knownType: false,
    })
    expect(intentFields('ACTIVITY_TYPE_CREATE_WALLET', { other: 1 })).toEqual({
      known: [],
      other: [],
      knownType: false,
    })
  })
})

/** A `<dl>` as [term, description] text pairs. */
function pairs(list: Element): [string, string][] {
  const terms = [...list.querySelectorAll('dt')]
  return terms.map((dt) => [dt.textContent ?? '', dt.nextElementSibling?.textContent ?? ''])
}
