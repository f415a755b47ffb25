import type { Meta, StoryObj } from '@storybook/react-vite'
import { userEvent, within } from 'storybook/test'
import { SignMessageDialog } from '../src/components/index.ts'
import { totpCode } from '../src/core/test/totpCode.ts'
import { type Live, liveDecorators } from './support/live.tsx'

// Issue 38: the step-up challenge in each state, where a drop-in meets it: a signature an MFA
// policy holds (`activity.action == 'SIGN'`), live against the in-page service.
const meta = {
  title: 'Wallets/StepUp',
  component: SignMessageDialog,
  ...liveDecorators,
  args: { open: true, onOpenChange: () => {}, message: 'Pay 12 USDC to example.app' },
  parameters: {
    layout: 'fullscreen',
    live: {
      signedIn: true,
      wallets: [{ walletName: 'Everyday', chains: ['ethereum'] }],
      mfa: { recoveryCodes: true, policies: ['signing'] },
    },
  },
} satisfies Meta<typeof SignMessageDialog>
export default meta
type Story = StoryObj<typeof meta>

const body = (el: HTMLElement) => within(el.ownerDocument.body)

/** Codes no TOTP window around now accepts. */
const wrongCode = (secret: string) => {
  const now = Date.now()
  const valid = new Set([-30_000, 0, 30_000, 60_000].map((d) => totpCode(secret, now + d)))
  return ['111111', '222222', '333333', '444444', '555555'].find((c) => !valid.has(c))!
}

/** Signs, and meets the challenge: the code field (focused), a recovery code, a passkey. */
const held = async (canvasElement: HTMLElement, sign = 'Sign') => {
  const s = body(canvasElement)
  await s.findByText(/^0x[0-9a-fA-F]{40}$/)
  await userEvent.click(s.getByRole('button', { name: sign }))
  return s
}

export const Code: Story = {
  play: async ({ canvasElement }) => {
    const s = await held(canvasElement)
    await s.findByRole('textbox', { name: 'Authenticator code' })
    await s.findByRole('button', { name: 'Use a passkey' })
  },
}
export const CodeDark: Story = { ...Code, globals: { theme: 'dark' } }
export const CodeSpanish: Story = {
  globals: { locale: 'es' },
  play: async ({ canvasElement }) => {
    const s = await held(canvasElement, 'Firmar')
    await s.findByRole('textbox', { name: 'Código de autenticación' })
  },
}
export const CodeArabic: Story = {
  globals: { locale: 'ar' },
  play: async ({ canvasElement }) => {
    const s = await held(canvasElement, 'توقيع')
    await s.findByRole('textbox', { name: 'رمز المصادقة' })
  },
}

export const WrongCode: Story = {
  play: async ({ canvasElement, loaded }) => {
    const s = await held(canvasElement)
    const field = await s.findByRole('textbox', { name: 'Authenticator code' })
    await userEvent.type(field, `${wrongCode((loaded.live as Live).totpSecret as string)}{Enter}`)
    await s.findByText(/That code isn’t right/)
  },
}

/** Five wrong codes spend the user's budget: the sixth try says how long to wait. */
export const TooManyTries: Story = {
  play: async ({ canvasElement, loaded }) => {
    const s = await held(canvasElement)
    const field = await s.findByRole('textbox', { name: 'Authenticator code' })
    const wrong = wrongCode((loaded.live as Live).totpSecret as string)
    for (let i = 0; i < 6; i++) {
      await userEvent.clear(field)
      await userEvent.type(field, `${wrong}{Enter}`)
      await s.findByRole('alert')
    }
    await s.findByText(/Too many tries/)
  },
}

export const RecoveryCode: Story = {
  play: async ({ canvasElement }) => {
    const s = await held(canvasElement)
    await userEvent.click(await s.findByRole('button', { name: 'Use a recovery code instead' }))
    await s.findByRole('textbox', { name: 'Recovery code' })
  },
}

export const RecoveryCodeMalformed: Story = {
  play: async ({ canvasElement }) => {
    const s = await held(canvasElement)
    await userEvent.click(await s.findByRole('button', { name: 'Use a recovery code instead' }))
    await userEvent.type(await s.findByRole('textbox', { name: 'Recovery code' }), 'ABC{Enter}')
    await s.findByText(/A recovery code has 10 letters and digits/)
  },
}

/** The right code: the signature is made, once. */
export const Done: Story = {
  play: async ({ canvasElement, loaded }) => {
    const s = await held(canvasElement)
    const field = await s.findByRole('textbox', { name: 'Authenticator code' })
    const secret = (loaded.live as Live).totpSecret as string
    await userEvent.type(field, `${totpCode(secret, Date.now() + 30_000)}{Enter}`)
    await s.findByRole('heading', { name: 'Message signed' })
  },
}

/** A policy that accepts only a passkey: no code field, the passkey button has focus. */
export const PasskeyOnly: Story = {
  parameters: {
    live: {
      signedIn: true,
      wallets: [{ walletName: 'Everyday', chains: ['ethereum'] }],
      // The user's passkey: a policy only a passkey proves is refused to a user without one.
      passkey: true,
      mfa: { policies: ['signingPasskeyOnly'] },
    },
  },
  play: async ({ canvasElement }) => {
    const s = await held(canvasElement)
    await s.findByRole('button', { name: 'Use a passkey' })
    await s.findByText('Use your passkey to continue.')
  },
}
