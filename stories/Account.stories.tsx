import type { Meta, StoryObj } from '@storybook/react-vite'
import { expect, userEvent, within } from 'storybook/test'
import { ActivityApproval, SessionStatus, UserProfile } from '../src/components/index.ts'
import { totpCode } from '../src/core/test/totpCode.ts'
import { type Live, liveDecorators } from './support/live.tsx'

const meta = {
  title: 'Account',
  ...liveDecorators,
  parameters: { layout: 'padded' },
  decorators: [
    (Story) => (
      <div style={{ maxInlineSize: 560, marginInline: 'auto' }}>
        <Story />
      </div>
    ),
    ...liveDecorators.decorators,
  ],
} satisfies Meta
export default meta
type Story = StoryObj<typeof meta>

export const Profile: Story = {
  render: () => <UserProfile />,
  parameters: { live: { secondSession: true } },
  play: async ({ canvasElement }) => {
    await within(canvasElement).findByRole('textbox', { name: 'Name' })
  },
}
export const ProfileDark: Story = { ...Profile, globals: { theme: 'dark' } }
export const ProfileArabic: Story = {
  ...Profile,
  globals: { locale: 'ar' },
  play: async ({ canvasElement }) => {
    await within(canvasElement).findByRole('textbox', { name: 'الاسم' })
  },
}
export const ProfileLoading: Story = { render: () => <UserProfile /> }

export const SessionActive: Story = {
  render: () => <SessionStatus onSignIn={() => {}} />,
  parameters: { live: { signedIn: true } },
  play: async ({ canvasElement }) => {
    await within(canvasElement).findByText('Signed in')
  },
}
export const SessionActiveSpanish: Story = {
  ...SessionActive,
  globals: { locale: 'es' },
  play: async ({ canvasElement }) => {
    await within(canvasElement).findByText('Sesión iniciada')
  },
}
/** Less than the warning lead time (60 s) left. */
export const SessionExpiring: Story = {
  ...SessionActive,
  parameters: { live: { signedIn: true, sessionSeconds: 45 } },
  play: async ({ canvasElement }) => {
    await within(canvasElement).findByText('Session ending soon')
  },
}
export const SessionExpiringDark: Story = { ...SessionExpiring, globals: { theme: 'dark' } }
export const SessionExpired: Story = {
  ...SessionActive,
  parameters: { live: { signedIn: true, sessionSeconds: 1, settleMs: 1500 } },
  play: async ({ canvasElement }) => {
    await within(canvasElement).findByText('Session expired')
  },
}
export const SessionSignedOut: Story = {
  render: () => <SessionStatus onSignIn={() => {}} />,
  play: async ({ canvasElement }) => {
    await within(canvasElement).findByText('Not signed in')
  },
}

/** Two root users, quorum two: the other user's create_wallet waits for this one. */
export const ApprovalWaiting: Story = {
  render: (_, { loaded }) => <ActivityApproval activityId={(loaded.live as Live).activityId!} />,
  parameters: { live: { consensus: true } },
  play: async ({ canvasElement }) => {
    await within(canvasElement).findByRole('button', { name: 'Approve' })
  },
}
export const ApprovalWaitingArabic: Story = {
  ...ApprovalWaiting,
  globals: { locale: 'ar' },
  play: async ({ canvasElement }) => {
    await within(canvasElement).findByRole('button', { name: 'موافقة' })
  },
}
export const ApprovalWaitingDark: Story = { ...ApprovalWaiting, globals: { theme: 'dark' } }
/** Approving completes the activity: the wallet is created. */
export const Approved: Story = {
  ...ApprovalWaiting,
  play: async ({ canvasElement }) => {
    const c = within(canvasElement)
    await userEvent.click(await c.findByRole('button', { name: 'Approve' }))
    await c.findByText('You approved this action.')
  },
}

/**
 * Ana asks to sign a payload and puts 16 fields of her own before the real ones, three named like
 * them with a zero-width joiner. Omar sees the payload and signer that will be signed first, her
 * fields apart as not parameters of a signature, each hidden character marked.
 */
export const ApprovalWithAddedFields: Story = {
  render: (_, { loaded }) => <ActivityApproval activityId={(loaded.live as Live).activityId!} />,
  parameters: { live: { consensus: { decoys: true } } },
  play: async ({ canvasElement }) => {
    const c = within(canvasElement)
    await c.findByRole('button', { name: 'Approve' })
    const details = c.getByRole('region', { name: 'What it does' })
    await expect(within(details).getByText(`0x${'ee'.repeat(32)}`)).toBeVisible()
    const other = within(details).getByRole('region', {
      name: 'Other fields, not parameters of this action (16)',
    })
    await expect(within(other).getAllByText('U+200D')).toHaveLength(3)
    await expect(within(other).getByRole('button', { name: 'Show all (8 more)' })).toBeVisible()
  },
}
export const ApprovalWithAddedFieldsArabic: Story = {
  ...ApprovalWithAddedFields,
  globals: { locale: 'ar' },
  play: async ({ canvasElement }) => {
    await within(canvasElement).findByRole('button', { name: 'موافقة' })
  },
}
export const ApprovalWithAddedFieldsDark: Story = { ...ApprovalWithAddedFields, globals: { theme: 'dark' } }
/** "Show all": every field the requester added, none left out; focus on the list's heading. */
export const ApprovalWithAddedFieldsAll: Story = {
  ...ApprovalWithAddedFields,
  play: async ({ canvasElement }) => {
    const c = within(canvasElement)
    await userEvent.click(await c.findByRole('button', { name: 'Show all (8 more)' }))
    const other = c.getByRole('region', { name: 'Other fields, not parameters of this action (16)' })
    await expect(within(other).getByRole('heading')).toHaveFocus()
    await expect(within(other).getByText('memo12')).toBeVisible()
  },
}

/**
 * Omar's own MFA policy guards new wallets with his authenticator app: his approval is his consent,
 * so it asks for his code before it counts.
 */
export const ApprovalNeedsCode: Story = {
  ...ApprovalWaiting,
  parameters: { live: { consensus: { approverMfa: true } } },
  play: async ({ canvasElement }) => {
    const c = within(canvasElement)
    await userEvent.click(await c.findByRole('button', { name: 'Approve' }))
    await expect(await c.findByRole('textbox', { name: 'Authenticator code' })).toHaveFocus()
    await expect(c.queryByText('You approved this action.')).toBeNull()
  },
}
/** With his code the vote counts: the wallet is created. */
export const ApprovedWithCode: Story = {
  ...ApprovalNeedsCode,
  play: async ({ canvasElement, loaded }) => {
    const c = within(canvasElement)
    await userEvent.click(await c.findByRole('button', { name: 'Approve' }))
    const field = await c.findByRole('textbox', { name: 'Authenticator code' })
    const secret = (loaded.live as Live).totpSecret as string
    await userEvent.type(field, `${totpCode(secret, Date.now() + 30_000)}{Enter}`)
    await c.findByText('You approved this action.')
  },
}

/**
 * A policy asked for consensus: the app's back end (not a root user) asks for a wallet, which the
 * policy "Two treasurers approve new wallets" allows once two users tagged `treasurer` approve.
 * Omar, a treasurer, sees which policy he is approving for; the policy about signing is not named.
 */
export const ApprovalWaitingOnPolicy: Story = {
  render: (_, { loaded }) => <ActivityApproval activityId={(loaded.live as Live).activityId!} />,
  parameters: { live: { policyConsensus: true } },
  play: async ({ canvasElement }) => {
    const c = within(canvasElement)
    await c.findByText('Two treasurers approve new wallets')
    await expect(c.getByText('Asked by')).toBeVisible()
    await expect(c.queryByText('Back end pays the payroll contract')).toBeNull()
    await expect(c.getByRole('button', { name: 'Approve' })).toBeEnabled()
  },
}
export const ApprovalWaitingOnPolicyDark: Story = { ...ApprovalWaitingOnPolicy, globals: { theme: 'dark' } }
/** The first treasurer's approval is recorded; the activity still waits for the second. */
export const ApprovedOnPolicyFirstOfTwo: Story = {
  ...ApprovalWaitingOnPolicy,
  play: async ({ canvasElement }) => {
    const c = within(canvasElement)
    await userEvent.click(await c.findByRole('button', { name: 'Approve' }))
    await c.findByText('You approved this action.')
    await c.findByText('2 so far')
    await expect(c.getByText('Consensus needed')).toBeVisible()
  },
}
