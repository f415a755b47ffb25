import type { Meta, StoryObj } from '@storybook/react-vite'
import { expect, userEvent, within } from 'storybook/test'
import { LinkedLogins } from '../src/components/index.ts'
import { createMfaPolicy } from '../src/core/actions/activities/createMfaPolicy.ts'
import { type Live, latestCode, liveDecorators } from './support/live.tsx'

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

// ---- linking (issue 38): an e-mail for a user who signs in another way, and an OAuth provider ----

/** Ana signs in with an API key only: "Link an email" is offered, and the code step follows. */
export const LinkEmailCodeSent: Story = {
  parameters: { live: { signedInWithApiKey: true } },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await canvas.findByText('Laptop key')
    await userEvent.click(await canvas.findByRole('button', { name: 'Link an email' }))
    const address = await canvas.findByRole('textbox', { name: 'Email address' })
    await expect(document.activeElement).toBe(address)
    await userEvent.type(address, 'ana@example.com{Enter}')
    await canvas.findByText(/We sent a code to ana@example\.com/)
    await expect(canvas.getByRole('textbox', { name: 'Code from the message' })).toBeTruthy()
  },
}
/** …and with the code from the message, the address is linked (verified) beside the key. */
export const LinkEmailLinked: Story = {
  parameters: { live: { signedInWithApiKey: true } },
  play: async ({ canvasElement, loaded }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Link an email' }))
    await userEvent.type(
      await canvas.findByRole('textbox', { name: 'Email address' }),
      'ana@example.com{Enter}',
    )
    const field = await canvas.findByRole('textbox', { name: 'Code from the message' })
    await userEvent.type(
      field,
      `${await latestCode((loaded.live as Live).service, 'ana@example.com')}{Enter}`,
    )
    await canvas.findByText('ana@example.com is linked.', {}, { timeout: 10_000 })
    await canvas.findByRole('button', { name: 'Unlink ana@example.com' })
  },
}

const GOOGLE = 'ana.google@example.com'

/** "Link Google": the provider's window (the in-page dev identity provider), then Google is listed. */
export const LinkGoogle: Story = {
  parameters: { live: { oauthWindow: { as: GOOGLE } } },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Link Google' }))
    await canvas.findByText('Google is linked.', {}, { timeout: 10_000 })
    await canvas.findByRole('button', { name: 'Unlink Google' })
  },
}
/** While the provider's window is open. */
export const LinkGoogleWaiting: Story = {
  parameters: { live: { oauthWindow: 'pending' } },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Link Google' }))
    await canvas.findByText('Finish signing in with Google in the window that opened.')
  },
}
/** The Google account already belongs to another account: refused, in words; nothing is linked. */
export const LinkGoogleRefused: Story = {
  parameters: { live: { oauthWindow: { as: GOOGLE }, oauthTaken: GOOGLE } },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Link Google' }))
    await canvas.findByText(
      /This Google account is already linked to another account/,
      {},
      { timeout: 10_000 },
    )
    await expect(canvas.getAllByRole('listitem')).toHaveLength(1)
  },
}
export const LinkGoogleRefusedArabic: Story = {
  globals: { locale: 'ar' },
  parameters: { live: { oauthWindow: { as: GOOGLE }, oauthTaken: GOOGLE } },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'ربط Google' }))
    await canvas.findByText(/حساب Google هذا مرتبط بالفعل بحساب آخر/, {}, { timeout: 10_000 })
  },
}
