import type { Meta, StoryObj } from '@storybook/react-vite'
import { expect, userEvent, within } from 'storybook/test'
import { LinkedLogins } from '../src/components/index.ts'
import { createMfaPolicy } from '../src/core/actions/activities/createMfaPolicy.ts'
import { type Live, liveDecorators } from './support/live.tsx'

// Issue 38: <LinkedLogins/> in each state, live against the in-page service (a user signed in by
// e-mail, so the e-mail is their only way in), and the step-up's e-mail/SMS factor
// (ContactFactorStep) when an MFA policy holds the unlink.
const meta = {
  title: 'Account/LinkedLogins',
  component: LinkedLogins,
  ...liveDecorators,
  parameters: { layout: 'padded', live: { signedIn: true } },
  decorators: [
    (Story) => (
      <div style={{ maxInlineSize: 560, marginInline: 'auto' }}>
        <Story />
      </div>
    ),
    ...liveDecorators.decorators,
  ],
} satisfies Meta<typeof LinkedLogins>
export default meta
type Story = StoryObj<typeof meta>

export const Default: Story = {
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await canvas.findByText('ana@example.com')
    await expect(canvas.getByRole('button', { name: 'Add passkey' })).toBeTruthy()
  },
}
export const DefaultDark: Story = { ...Default, globals: { theme: 'dark' } }
export const DefaultArabic: Story = {
  globals: { locale: 'ar' },
  play: async ({ canvasElement }) => {
    await within(canvasElement).findByText('طرق تسجيل الدخول')
  },
}

/** "Unlink" asks first; focus is on "Yes, unlink". */
export const ConfirmingUnlink: Story = {
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Unlink ana@example.com' }))
    const yes = await canvas.findByRole('button', { name: 'Yes, unlink' })
    await expect(document.activeElement).toBe(yes)
  },
}
export const ConfirmingUnlinkSpanish: Story = {
  globals: { locale: 'es' },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Desvincular ana@example.com' }))
    await canvas.findByRole('button', { name: 'Sí, desvincular' })
  },
}

/** The only way in: the service refuses, said in words. */
export const LastWayInRefused: Story = {
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Unlink ana@example.com' }))
    await userEvent.click(await canvas.findByRole('button', { name: 'Yes, unlink' }))
    await canvas.findByText(/This is your last way to sign in/)
  },
}
export const LastWayInRefusedArabic: Story = {
  globals: { locale: 'ar' },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'إلغاء ربط ana@example.com' }))
    await userEvent.click(await canvas.findByRole('button', { name: 'نعم، ألغِ الربط' }))
    await canvas.findByText(/هذه آخر طريقة لديك لتسجيل الدخول/)
  },
}

async function heldUnlink(
  canvasElement: HTMLElement,
  loaded: Record<string, unknown>,
  [unlink, yes] = ['Unlink ana@example.com', 'Yes, unlink'],
) {
  const canvas = within(canvasElement)
  // The policy also takes the authenticator app the user holds (`mfa: {}`): a policy only the
  // e-mail proves would refuse the e-mail's unlink outright (docs/mfa.md).
  await createMfaPolicy((loaded.live as Live).client, {
    mfaPolicyName: 'an e-mailed or app code for account changes',
    condition: "activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2'",
    requiredAuthenticationMethods: [
      { any: [{ type: 'AUTHENTICATION_TYPE_EMAIL_OTP' }, { type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] },
    ],
    order: 0,
  })
  await userEvent.click(await canvas.findByRole('button', { name: unlink }))
  await userEvent.click(await canvas.findByRole('button', { name: yes }))
  return canvas
}

/** With an authenticator app, for the policy's other method. */
const withApp = { live: { signedIn: true, mfa: {} } }

/** An MFA policy holds the unlink: the step-up offers "Email me a code" (ContactFactorStep). */
export const ContactFactorStepOffer: Story = {
  parameters: withApp,
  play: async ({ canvasElement, loaded }) => {
    const canvas = await heldUnlink(canvasElement, loaded)
    await canvas.findByRole('button', { name: 'Email me a code' }, { timeout: 10_000 })
  },
}
/** ContactFactorStep after sending: the masked address and the code field. */
export const ContactFactorStepSent: Story = {
  parameters: withApp,
  play: async ({ canvasElement, loaded }) => {
    const canvas = await heldUnlink(canvasElement, loaded)
    await userEvent.click(await canvas.findByRole('button', { name: 'Email me a code' }, { timeout: 10_000 }))
    await canvas.findByText(/We sent a code to a\*\*\*@example\.com/)
    await canvas.findByRole('textbox', { name: 'Code from the message' })
  },
}
export const ContactFactorStepSentArabic: Story = {
  parameters: withApp,
  globals: { locale: 'ar' },
  play: async ({ canvasElement, loaded }) => {
    const canvas = await heldUnlink(canvasElement, loaded, ['إلغاء ربط ana@example.com', 'نعم، ألغِ الربط'])
    const send = await canvas.findByRole(
      'button',
      { name: 'أرسل لي رمزًا بالبريد الإلكتروني' },
      { timeout: 10_000 },
    )
    await userEvent.click(send)
    await canvas.findByText(/a\*\*\*@example\.com/)
  },
}
