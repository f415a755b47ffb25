import type { Meta, StoryObj } from '@storybook/react-vite'
import { useState } from 'react'
import { expect, userEvent, waitFor, within } from 'storybook/test'
import { AuthForm, AuthModal } from '../src/components/index.ts'
import { useSession } from '../src/react/index.ts'
import { type Live, latestCode, liveDecorators } from './support/live.tsx'

const meta = {
  title: 'Sign-in/AuthModal',
  component: AuthModal,
  ...liveDecorators,
  args: { open: true, onOpenChange: () => {} },
  parameters: { layout: 'fullscreen' },
} satisfies Meta<typeof AuthModal>
export default meta
type Story = StoryObj<typeof meta>

const screen = (canvasElement: HTMLElement) => within(canvasElement.ownerDocument.body)

async function goToCode(canvasElement: HTMLElement, email: string) {
  const s = screen(canvasElement)
  await userEvent.type(await s.findByRole('textbox', { name: /email|correo|البريد/i }), email)
  await userEvent.keyboard('{Enter}')
  await s.findByRole('textbox', { name: /1/ }, { timeout: 8000 })
  return s
}

/** Uncontrolled: the modal renders its own "Sign in" trigger. */
export const Trigger: Story = {
  args: { open: undefined, onOpenChange: undefined },
  parameters: { layout: 'centered' },
}

/** The trigger once the session has expired: it says so and signs in again. */
export const TriggerSessionExpired: Story = {
  ...Trigger,
  parameters: { layout: 'centered', live: { signedIn: true, sessionSeconds: 1, settleMs: 1500 } },
  play: async ({ canvasElement }) => {
    await screen(canvasElement).findByRole('button', { name: 'Session expired — sign in again' })
  },
}
export const TriggerSessionExpiredDark: Story = { ...TriggerSessionExpired, globals: { theme: 'dark' } }

/** Opened after the session expired: the first step says why the form is back. */
export const MethodsSessionExpired: Story = {
  parameters: { live: { signedIn: true, sessionSeconds: 1, settleMs: 1500 } },
  play: async ({ canvasElement }) => {
    const s = screen(canvasElement)
    await s.findByRole('textbox', { name: 'Email address' })
    await s.findByText('Session expired — sign in again')
  },
}
export const MethodsSessionExpiredArabic: Story = {
  ...MethodsSessionExpired,
  globals: { locale: 'ar' },
  play: async ({ canvasElement }) => {
    await screen(canvasElement).findByText('انتهت الجلسة — سجّل الدخول مرة أخرى')
  },
}

/** Every method the service enables, in the default order. */
export const Methods: Story = {
  play: async ({ canvasElement }) => {
    await screen(canvasElement).findByRole('textbox', { name: 'Email address' })
  },
}

export const MethodsDark: Story = { ...Methods, globals: { theme: 'dark' } }

export const MethodsSpanish: Story = {
  globals: { locale: 'es' },
  play: async ({ canvasElement }) => {
    await screen(canvasElement).findByRole('textbox', { name: 'Correo electrónico' })
  },
}

export const MethodsArabic: Story = {
  globals: { locale: 'ar' },
  play: async ({ canvasElement }) => {
    await screen(canvasElement).findByRole('textbox', { name: 'البريد الإلكتروني' })
    await expect(canvasElement.ownerDocument.querySelector('dialog')?.getAttribute('dir')).toBe('rtl')
  },
}

export const MethodsArabicDark: Story = { ...MethodsArabic, globals: { locale: 'ar', theme: 'dark' } }

/** `methods` narrows and orders what the service enables. */
export const EmailAndGoogleOnly: Story = {
  args: { methods: ['google', 'email'] },
  play: Methods.play,
}

export const CustomAccent: Story = {
  args: { accent: '#0f766e', radius: 'lg' },
  play: Methods.play,
}

export const LoadingConfig: Story = {
  // The config request never settles: the modal shows its loading state.
  parameters: { live: { hangConfig: true } },
}

export const NoMethodsEnabled: Story = {
  parameters: { live: { proxySettings: { enabledProviders: [] } } },
  play: async ({ canvasElement }) => {
    await screen(canvasElement).findByText('This app hasn’t turned on any way to sign in yet.')
  },
}

export const ProxyDisabled: Story = {
  parameters: { live: { proxySettings: { enabled: false } } },
  play: async ({ canvasElement }) => {
    await screen(canvasElement).findByText(
      'Sign-in is switched off for this app. Try again later.',
      undefined,
      {
        timeout: 8000,
      },
    )
  },
}

export const InvalidEmail: Story = {
  play: async ({ canvasElement }) => {
    const s = screen(canvasElement)
    await userEvent.type(await s.findByRole('textbox', { name: 'Email address' }), 'ana@{Enter}')
    await s.findByText('Enter a valid email address.')
  },
}

export const PhoneStep: Story = {
  play: async ({ canvasElement }) => {
    const s = screen(canvasElement)
    await userEvent.click(await s.findByRole('button', { name: 'Use phone number instead' }))
    await userEvent.selectOptions(await s.findByRole('combobox', { name: 'Country or region' }), 'ES')
    await userEvent.type(s.getByRole('textbox', { name: 'Phone number' }), '612 345 678')
  },
}

export const PhoneStepArabic: Story = {
  globals: { locale: 'ar' },
  play: async ({ canvasElement }) => {
    const s = screen(canvasElement)
    await userEvent.click(await s.findByRole('button', { name: 'استخدام رقم الهاتف بدلًا من ذلك' }))
    await s.findByRole('combobox', { name: 'البلد أو المنطقة' })
  },
}

export const CodeEntry: Story = {
  play: async ({ canvasElement }) => {
    await goToCode(canvasElement, 'ana@example.com')
  },
}

export const CodeEntryDark: Story = { ...CodeEntry, globals: { theme: 'dark' } }

export const CodeEntrySpanish: Story = {
  globals: { locale: 'es' },
  play: CodeEntry.play,
}

export const CodeEntryArabic: Story = {
  globals: { locale: 'ar' },
  play: CodeEntry.play,
}

/**
 * The operator enabled a CAPTCHA (`[captcha]`): the e-mail step shows the provider's widget (here
 * a double of it) and the send button says what it waits for.
 */
export const Captcha: Story = {
  parameters: { live: { captcha: { provider: 'turnstile' } } },
  play: async ({ canvasElement }) => {
    const s = screen(canvasElement)
    await s.findByRole('group', { name: 'Security check' })
    await s.findByRole('button', { name: 'I am human' })
    await expect(s.getByRole('button', { name: 'Complete the security check first' })).toHaveAttribute(
      'aria-disabled',
      'true',
    )
  },
}

export const CaptchaDark: Story = { ...Captcha, globals: { theme: 'dark' } }

/** Solved: the button sends the code with the check's token. */
export const CaptchaSolved: Story = {
  parameters: { live: { captcha: { provider: 'hcaptcha' } } },
  play: async ({ canvasElement }) => {
    const s = screen(canvasElement)
    await userEvent.type(await s.findByRole('textbox', { name: 'Email address' }), 'ana@example.com')
    await userEvent.click(await s.findByRole('button', { name: 'I am human' }))
    await s.findByRole('button', { name: 'Continue' })
  },
}

/** The widget could not load its challenge: the message and "Try again". */
export const CaptchaError: Story = {
  parameters: { live: { captcha: { provider: 'turnstile', failFirst: true } } },
  play: async ({ canvasElement }) => {
    const s = screen(canvasElement)
    await s.findByText('The security check couldn’t load. Check your connection, then try again.')
    await s.findByRole('button', { name: 'Try again' })
  },
}

export const WrongCode: Story = {
  play: async ({ canvasElement, loaded }) => {
    const s = await goToCode(canvasElement, 'ana@example.com')
    const code = await latestCode((loaded.live as Live).service, 'ana@example.com')
    await userEvent.paste(code === '000000' ? '111111' : '000000')
    await s.findByText('That code isn’t right. Check it and try again.', undefined, { timeout: 8000 })
  },
}

export const CodeLocked: Story = {
  play: async ({ canvasElement, loaded }) => {
    const s = await goToCode(canvasElement, 'ana@example.com')
    const code = await latestCode((loaded.live as Live).service, 'ana@example.com')
    const wrong = code === '000000' ? '111111' : '000000'
    for (let attempt = 0; attempt < 5; attempt++) {
      await waitFor(() => expect(s.getByRole('textbox', { name: 'Digit 1 of 6' })).not.toBeDisabled(), {
        timeout: 8000,
      })
      await userEvent.click(s.getByRole('textbox', { name: 'Digit 1 of 6' }))
      await userEvent.paste(wrong)
      await s.findByRole('alert', undefined, { timeout: 8000 })
    }
    await s.findByText('Too many wrong attempts. Request a new code.', undefined, { timeout: 8000 })
  },
}

/**
 * New account: the code is read from the dev outbox and pasted; the passkey offer follows (the
 * story keeps the modal open, so the ready step shows after it).
 */
export const SignedUp: Story = {
  play: async ({ canvasElement, loaded }) => {
    const s = await goToCode(canvasElement, 'new.user@example.com')
    await userEvent.paste(await latestCode((loaded.live as Live).service, 'new.user@example.com'))
    await s.findByRole('heading', { name: /Your account is ready|Sign in faster/ }, { timeout: 10_000 })
  },
}

/**
 * The default once signed in: the modal closes itself (after the passkey offer) and
 * `useAuthModal().open()` resolves; the page behind it carries on.
 */
export const ClosesItselfOnSuccess: Story = {
  render: function Render(args) {
    const [open, setOpen] = useState(true)
    const session = useSession()
    return (
      <div style={{ padding: 24 }}>
        <p role="status">{session ? `Signed in as ${session.label}` : 'Signed out'}</p>
        <AuthModal {...args} open={open} onOpenChange={setOpen} />
      </div>
    )
  },
  play: async ({ canvasElement, loaded }) => {
    const s = await goToCode(canvasElement, 'closes@example.com')
    await userEvent.paste(await latestCode((loaded.live as Live).service, 'closes@example.com'))
    // A browser with passkeys gets the offer first; answering it ends the flow too.
    await waitFor(
      async () => {
        const notNow = s.queryByRole('button', { name: 'Not now' })
        if (notNow) await userEvent.click(notNow)
        await expect(s.queryByRole('dialog')).toBeNull()
      },
      { timeout: 10_000 },
    )
    await s.findByText('Signed in as closes@example.com')
  },
}

/** `offerPasskey={false}` skips "Sign in faster next time"; `showSuccess` ends with the ready step. */
export const ReadyStepWithoutPasskeyOffer: Story = {
  args: { offerPasskey: false, showSuccess: true },
  play: async ({ canvasElement, loaded }) => {
    const s = await goToCode(canvasElement, 'ready@example.com')
    await userEvent.paste(await latestCode((loaded.live as Live).service, 'ready@example.com'))
    await s.findByRole('heading', { name: 'Your account is ready' }, { timeout: 10_000 })
    await s.findByText('You’re all set to continue.')
    await expect(s.getByRole('button', { name: 'Done' })).toBeVisible()
  },
}

export const ReadyStepDark: Story = { ...ReadyStepWithoutPasskeyOffer, globals: { theme: 'dark' } }

export const SignedUpArabic: Story = {
  globals: { locale: 'ar' },
  play: async ({ canvasElement, loaded }) => {
    const s = await goToCode(canvasElement, 'new.user@example.com')
    await userEvent.paste(await latestCode((loaded.live as Live).service, 'new.user@example.com'))
    await s.findByRole('heading', { name: /حسابك جاهز|سجّل الدخول أسرع/ }, { timeout: 10_000 })
  },
}

/** OAuth: the authorization window is open and the modal waits for it. */
export const OAuthWaiting: Story = {
  parameters: { live: { oauthWindow: 'pending' } },
  play: async ({ canvasElement }) => {
    const s = screen(canvasElement)
    await userEvent.click(await s.findByRole('button', { name: 'Continue with Google' }))
    await s.findByText('Finish signing in with Google in the window that opened.', undefined, {
      timeout: 8000,
    })
  },
}

/** OAuth with the popup blocked: the redirect fallback is offered. */
export const OAuthPopupBlocked: Story = {
  parameters: { live: { oauthWindow: 'blocked' } },
  play: async ({ canvasElement }) => {
    const s = screen(canvasElement)
    await userEvent.click(await s.findByRole('button', { name: 'Continue with Google' }))
    await s.findByText('The pop-up was blocked', undefined, { timeout: 8000 })
  },
}

/** The passkey step while the browser shows its prompt. */
export const PasskeyPrompt: Story = {
  play: async ({ canvasElement }) => {
    const s = screen(canvasElement)
    await userEvent.click(await s.findByRole('button', { name: 'Continue with a passkey' }))
    await s.findByRole('heading', { name: 'Use your passkey' })
  },
}

export const WalletsNoneFound: Story = {
  play: async ({ canvasElement }) => {
    const s = screen(canvasElement)
    await userEvent.click(await s.findByRole('button', { name: 'Continue with a wallet' }))
    await s.findByText('No wallet found', undefined, { timeout: 8000 })
  },
}

/** A browser wallet announced through EIP-6963 (a real secp256k1 key answering in the page). */
export const WalletsDetected: Story = {
  parameters: { live: { injectWallet: true } },
  play: async ({ canvasElement }) => {
    const s = screen(canvasElement)
    await userEvent.click(await s.findByRole('button', { name: 'Continue with a wallet' }))
    await s.findByRole('button', { name: /Example Wallet/ }, { timeout: 8000 })
  },
}

/** Picking the announced wallet signs in for real (one signature, no transaction). */
export const WalletSignedIn: Story = {
  parameters: { live: { injectWallet: true } },
  play: async ({ canvasElement }) => {
    const s = screen(canvasElement)
    await userEvent.click(await s.findByRole('button', { name: 'Continue with a wallet' }))
    await userEvent.click(await s.findByRole('button', { name: /Example Wallet/ }, { timeout: 8000 }))
    await s.findByRole(
      'heading',
      { name: /Your account is ready|Sign in faster|You’re signed in/ },
      { timeout: 10_000 },
    )
  },
}

/** The inline form for an app's own sign-in page. */
export const InlineForm: StoryObj<typeof AuthForm> = {
  render: () => (
    <div style={{ padding: 24, display: 'grid', placeItems: 'center', minHeight: '100vh' }}>
      <AuthForm />
    </div>
  ),
  play: Methods.play,
}

export const InlineFormArabicDark: StoryObj<typeof AuthForm> = {
  ...InlineForm,
  globals: { locale: 'ar', theme: 'dark' },
  play: async ({ canvasElement }) => {
    await screen(canvasElement).findByRole('textbox', { name: 'البريد الإلكتروني' })
  },
}
