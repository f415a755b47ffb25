import type { Meta, StoryObj } from '@storybook/react-vite'
import { userEvent, within } from 'storybook/test'
import { ExportWallet, ImportWallet } from '../src/components/index.ts'
import { type Live, liveDecorators } from './support/live.tsx'

const meta = {
  title: 'Wallets/Export and import',
  ...liveDecorators,
  parameters: {
    layout: 'fullscreen',
    live: { signedIn: true, wallets: [{ walletName: 'Everyday', chains: ['ethereum'] }] },
  },
} satisfies Meta
export default meta
type Story = StoryObj<typeof meta>

const body = (el: HTMLElement) => within(el.ownerDocument.body)
const state = (el: HTMLElement, value: string) =>
  body(el).findByText((_, node) => node?.getAttribute('data-lk-state') === value, undefined, {
    timeout: 15_000,
  })

export const ExportWarning: Story = {
  render: (_, { loaded }) => (
    <ExportWallet
      open
      onOpenChange={() => {}}
      walletId={(loaded.live as Live).walletIds[0]}
      frameMode="inline"
    />
  ),
  play: async ({ canvasElement }) => {
    await body(canvasElement).findByRole('checkbox', { name: 'I understand and I’m in a private place' })
  },
}

export const ExportWarningArabic: Story = { ...ExportWarning, globals: { locale: 'ar' }, play: undefined }

/** The phrase is decrypted and shown inside the service's frame; this page only relays the bundle. */
export const ExportRevealed: Story = {
  ...ExportWarning,
  play: async ({ canvasElement }) => {
    const s = body(canvasElement)
    await userEvent.click(await s.findByRole('checkbox', { name: 'I understand and I’m in a private place' }))
    await userEvent.click(s.getByRole('button', { name: 'Reveal recovery phrase' }))
    await state(canvasElement, 'shown')
  },
}

export const ExportRevealedDark: Story = { ...ExportRevealed, globals: { theme: 'dark' } }

export const ExportPrivateKey: Story = {
  render: (_, { loaded }) => (
    <ExportWallet
      open
      onOpenChange={() => {}}
      address={(loaded.live as Live).addresses[0]}
      frameMode="inline"
    />
  ),
  play: async ({ canvasElement }) => {
    const s = body(canvasElement)
    await userEvent.click(await s.findByRole('checkbox', { name: 'I understand and I’m in a private place' }))
    await userEvent.click(s.getByRole('button', { name: 'Reveal private key' }))
    await state(canvasElement, 'shown')
  },
}

/** The phrase is typed inside the service's frame and leaves it only encrypted. */
export const ImportForm: Story = {
  render: () => <ImportWallet open onOpenChange={() => {}} frameMode="inline" />,
  play: async ({ canvasElement }) => {
    await state(canvasElement, 'ready')
  },
}

export const ImportFormSpanish: Story = { ...ImportForm, globals: { locale: 'es' } }
