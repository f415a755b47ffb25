import type { Meta, StoryObj } from '@storybook/react-vite'
import { userEvent, within } from 'storybook/test'
import { WalletList } from '../src/components/index.ts'
import { liveDecorators } from './support/live.tsx'

const meta = {
  title: 'Wallets/WalletList',
  component: WalletList,
  ...liveDecorators,
  parameters: { layout: 'padded' },
  render: (args) => (
    <div style={{ maxInlineSize: 560, marginInline: 'auto' }}>
      <WalletList {...args} />
    </div>
  ),
} satisfies Meta<typeof WalletList>
export default meta
type Story = StoryObj<typeof meta>

const twoWallets = {
  signedIn: true,
  wallets: [
    { walletName: 'Everyday', chains: ['ethereum', 'solana'] },
    { walletName: 'Savings', chains: ['bitcoin'] },
  ],
}

/** Signed out: the wallet queries wait for a session. */
export const Loading: Story = {}

export const Empty: Story = {
  parameters: { live: { signedIn: true } },
  play: async ({ canvasElement }) => {
    await within(canvasElement).findByText('No wallets yet')
  },
}

export const WithWallets: Story = {
  parameters: { live: twoWallets },
  play: async ({ canvasElement }) => {
    await within(canvasElement).findAllByRole('button', { name: /^Copy address/ })
  },
}

export const WithWalletsDark: Story = { ...WithWallets, globals: { theme: 'dark' } }

export const WithWalletsArabic: Story = {
  ...WithWallets,
  globals: { locale: 'ar' },
  play: async ({ canvasElement }) => {
    await within(canvasElement).findAllByRole('button', { name: /^نسخ العنوان/ })
  },
}

export const WithWalletsSpanish: Story = {
  ...WithWallets,
  globals: { locale: 'es' },
  play: async ({ canvasElement }) => {
    await within(canvasElement).findAllByRole('button', { name: /^Copiar la dirección/ })
  },
}

export const CreateWalletForm: Story = {
  parameters: { live: { signedIn: true } },
  play: async ({ canvasElement }) => {
    const c = within(canvasElement)
    await userEvent.click(await c.findByRole('button', { name: 'Create wallet' }))
    await c.findByRole('textbox', { name: 'Wallet name' })
  },
}

/** Created for real through useCreateWallet: addresses derived by the service. */
export const CreatedWallet: Story = {
  parameters: { live: { signedIn: true } },
  play: async ({ canvasElement }) => {
    const c = within(canvasElement)
    await userEvent.click(await c.findByRole('button', { name: 'Create wallet' }))
    await userEvent.click(await c.findByRole('checkbox', { name: 'Bitcoin' }))
    await userEvent.click(c.getAllByRole('button', { name: 'Create wallet' }).at(-1)!)
    await c.findAllByRole('button', { name: /^Copy address bc1/ })
  },
}

export const DeleteConfirmation: Story = {
  parameters: { live: twoWallets },
  play: async ({ canvasElement }) => {
    const c = within(canvasElement)
    await userEvent.click(await c.findByRole('button', { name: 'Delete wallet: Savings' }))
    await c.findByText('Delete “Savings”?')
  },
}

export const ReadOnly: Story = {
  args: { readOnly: true },
  parameters: { live: twoWallets },
  play: WithWallets.play,
}
