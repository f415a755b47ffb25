import type { Meta, StoryObj } from '@storybook/react-vite'
import { expect, userEvent, within } from 'storybook/test'
import { SignMessageDialog } from '../src/components/index.ts'
import { liveDecorators } from './support/live.tsx'

const MESSAGE = `example.app wants you to sign in with your Ethereum account.

URI: https://example.app
Version: 1
Nonce: 8f2c1d9e
Issued At: 2026-11-22T16:00:00Z`

const meta = {
  title: 'Wallets/SignMessageDialog',
  component: SignMessageDialog,
  ...liveDecorators,
  args: { open: true, onOpenChange: () => {}, message: MESSAGE },
  parameters: {
    layout: 'fullscreen',
    live: { signedIn: true, wallets: [{ walletName: 'Everyday', chains: ['ethereum'] }] },
  },
} satisfies Meta<typeof SignMessageDialog>
export default meta
type Story = StoryObj<typeof meta>

const body = (el: HTMLElement) => within(el.ownerDocument.body)

export const Review: Story = {
  play: async ({ canvasElement }) => {
    await body(canvasElement).findByText(/^0x[0-9a-fA-F]{40}$/)
  },
}

export const ReviewDark: Story = { ...Review, globals: { theme: 'dark' } }
export const ReviewArabic: Story = { ...Review, globals: { locale: 'ar' } }

/**
 * A message whose right-to-left override would make "1000" read "0001", and a zero-width space:
 * each shown as a marked U+ code (read "hidden character U+202E"), with a warning.
 */
export const HiddenCharacters: Story = {
  args: { message: 'Pay \u202E1000\u202C USDC to the\u200B merchant' },
  play: async ({ canvasElement }) => {
    const s = body(canvasElement)
    await s.findByText(/^0x[0-9a-fA-F]{40}$/)
    await expect(s.getByRole('status')).toHaveTextContent(/hidden or direction-changing characters/)
    await expect(canvasElement.ownerDocument.querySelectorAll('[data-lk-hidden-char]')).toHaveLength(3)
  },
}

export const HiddenCharactersArabic: Story = {
  ...HiddenCharacters,
  globals: { locale: 'ar' },
  play: async ({ canvasElement }) => {
    const s = body(canvasElement)
    await s.findByText(/^0x[0-9a-fA-F]{40}$/)
    await expect(canvasElement.ownerDocument.querySelectorAll('[data-lk-hidden-char]')).toHaveLength(3)
  },
}

/** Signed by the service with the account's key (EIP-191). */
export const Signed: Story = {
  play: async ({ canvasElement }) => {
    const s = body(canvasElement)
    await s.findByText(/^0x[0-9a-fA-F]{40}$/)
    await userEvent.click(s.getByRole('button', { name: 'Sign' }))
    await s.findByRole('heading', { name: 'Message signed' })
  },
}

export const SignedSpanish: Story = {
  globals: { locale: 'es' },
  play: async ({ canvasElement }) => {
    const s = body(canvasElement)
    await s.findByText(/^0x[0-9a-fA-F]{40}$/)
    await userEvent.click(s.getByRole('button', { name: 'Firmar' }))
    await s.findByRole('heading', { name: 'Mensaje firmado' })
  },
}

/** No account yet: signing is not possible. */
export const NoAccount: Story = {
  parameters: { live: { signedIn: true, wallets: [] } },
  play: async ({ canvasElement }) => {
    await body(canvasElement).findByText('No wallets yet')
  },
}
