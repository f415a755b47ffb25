import type { Meta, StoryObj } from '@storybook/react-vite'
import { userEvent, within } from 'storybook/test'
import { ActivityApproval, SessionStatus, UserProfile } from '../src/components/index.ts'
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
