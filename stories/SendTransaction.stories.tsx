import type { SendTransactionStatus } from '@latchkey/protocol'
import type { Meta, StoryObj } from '@storybook/react-vite'
import { expect, userEvent, waitFor, within } from 'storybook/test'
import { decodeFunctionData, encodeFunctionData, erc20Abi, parseAbi } from 'viem'
import { SendTransaction } from '../src/components/index.ts'
import { liveDecorators } from './support/live.tsx'

const TOKEN = '0x5FbDB2315678afecb367f032d93F642f64180aa3'
const SHOP = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
const HASH = '0x8a3f5c2e9b7d4a1f6e0c3b8d5a2f7e9c1b4d6a8f0e3c5b7d9a1f2e4c6b8d0a3f'

/** Approve the shop to spend 25 tokens, then pay it 0.0015 ETH: one atomic batch. */
const CALLS = [
  {
    to: TOKEN,
    abi: erc20Abi,
    data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [SHOP, 25n * 10n ** 18n] }),
  },
  { to: SHOP, value: 1_500_000_000_000_000n },
]

const meta = {
  title: 'Wallets/SendTransaction',
  component: SendTransaction,
  ...liveDecorators,
  args: {
    open: true,
    onOpenChange: () => {},
    calls: CALLS,
    caip2: 'eip155:31337',
    pollingIntervalMs: 200,
    decodeFunctionData,
  },
  parameters: {
    layout: 'fullscreen',
    live: {
      signedIn: true,
      wallets: [{ walletName: 'Everyday', chains: ['ethereum'] }],
      send: { statuses: [{ txStatus: 'INCLUDED', eth: { txHash: HASH } }] },
    },
  },
} satisfies Meta<typeof SendTransaction>
export default meta
type Story = StoryObj<typeof meta>

/** The signed-in user's send, whose status reads answer `status` (over the default, INCLUDED). */
const statuses = (status: SendTransactionStatus) => ({
  live: { ...meta.parameters.live, send: { statuses: [status] } },
})

const body = (el: HTMLElement) => within(el.ownerDocument.body)

/**
 * Confirms once it can be: the calls decode before the wallet's accounts load, and Confirm stays
 * disabled until the sender is known, so a click before that does nothing.
 */
const confirm = async (canvasElement: HTMLElement, name = 'Confirm') => {
  const s = body(canvasElement)
  await s.findByText(/^approve\(/)
  const button = s.getByRole('button', { name })
  await waitFor(() => expect(button).toBeEnabled())
  await userEvent.click(button)
  return s
}

/** Each call: the approve decoded from its ABI, the payment in ETH; the account pays the fee. */
export const Review: Story = {
  play: async ({ canvasElement }) => {
    await body(canvasElement).findByText(/^approve\(/)
  },
}

const PAYEE_ABI = parseAbi(['function setPayee(string payee)'])

/**
 * A decoded string argument with a right-to-left override ("pay.live.eth" on screen, "evil" sent):
 * the override is shown as a marked U+ code, with a warning.
 */
export const HiddenCharacters: Story = {
  args: {
    calls: [
      {
        to: SHOP,
        abi: PAYEE_ABI,
        data: encodeFunctionData({
          abi: PAYEE_ABI,
          functionName: 'setPayee',
          args: ['pay.\u202Eevil\u202C.eth'],
        }),
      },
    ],
  },
  play: async ({ canvasElement }) => {
    const s = body(canvasElement)
    await s.findByText(/^setPayee\(/)
    await expect(canvasElement.ownerDocument.querySelectorAll('[data-lk-hidden-char]')).toHaveLength(2)
  },
}

/**
 * Under a spending limit of 1 ETH a day on the account, 0.65 ETH of it spent (issue 37): the
 * review says what is left and when more frees, before the user confirms.
 */
export const WithinAllowance: Story = {
  parameters: { live: { ...meta.parameters.live, limits: { spentWei: 650_000_000_000_000_000n } } },
  play: async ({ canvasElement }) => {
    const s = body(canvasElement)
    await s.findByText(/^approve\(/)
    const row = (await s.findByText('Spending limit')).nextElementSibling as HTMLElement
    await within(row).findByText('0.35 ETH left today')
    await within(row).findByText(/^frees at /)
  },
}

/** The app's gas sponsor pays the fee. */
export const Sponsored: Story = {
  args: { sponsor: true },
  globals: { theme: 'dark' },
  play: async ({ canvasElement }) => {
    const s = body(canvasElement)
    await s.findByText(/^approve\(/)
    await s.findByText('Sponsored')
  },
}

/** Confirmed, waiting for the service to accept the send. */
export const Sending: Story = {
  parameters: {
    live: { signedIn: true, wallets: [{ walletName: 'Everyday', chains: ['ethereum'] }], send: 'hang' },
  },
  play: async ({ canvasElement }) => {
    const s = await confirm(canvasElement)
    await s.findByRole('button', { name: 'Sending…' })
  },
}

/** Broadcast and still not in a block a minute later (here after 1 s): the status says so. */
export const TakingLonger: Story = {
  args: { slowAfterMs: 1_000 },
  parameters: statuses({ txStatus: 'BROADCASTED', eth: { txHash: HASH } }),
  play: async ({ canvasElement }) => {
    const s = await confirm(canvasElement)
    await s.findByRole('heading', { name: 'Transaction sent' })
    await s.findByText(
      'Taking longer than usual. It is still on its way, and this window will show how it ends.',
    )
  },
}

/** Broadcast, not yet in a block. */
export const Pending: Story = {
  args: { sponsor: true },
  parameters: statuses({ txStatus: 'BROADCASTED', eth: { txHash: HASH } }),
  play: async ({ canvasElement }) => {
    const s = await confirm(canvasElement)
    await s.findByRole('heading', { name: 'Transaction sent' })
    await s.findByText(HASH)
  },
}

export const Included: Story = {
  globals: { locale: 'es' },
  play: async ({ canvasElement }) => {
    const s = await confirm(canvasElement, 'Confirmar')
    await s.findByRole('heading', { name: 'Transacción confirmada' })
  },
}

/**
 * Reverted with the called contract's own message, a URL in it: the wallet's dialog shows the
 * contract's words as text, never as a link of the contract's choosing.
 */
export const FailedWithContractText: Story = {
  parameters: statuses({
    txStatus: 'FAILED',
    eth: { txHash: HASH },
    error: {
      message:
        'the transaction reverted: Tokens locked for your safety. Verify your wallet at https://latchkey-support.example/verify/0x8a3f5c2e9b7d4a1f6e0c3b8d5a2f7e9c1b4d6a8f to unlock',
    },
  }),
  play: async ({ canvasElement }) => {
    const s = await confirm(canvasElement)
    await s.findByRole('heading', { name: 'Transaction failed' })
    await expect(s.getByRole('alert')).toHaveTextContent('https://latchkey-support.example/verify')
    await expect(within(s.getByRole('alert')).queryByRole('link')).toBeNull()
  },
}

/** Reverted on-chain: neither call took effect. */
export const Failed: Story = {
  globals: { locale: 'ar' },
  parameters: statuses({
    txStatus: 'FAILED',
    eth: { txHash: HASH },
    error: { message: 'ERC20InsufficientBalance' },
  }),
  play: async ({ canvasElement }) => {
    const s = await confirm(canvasElement, 'تأكيد')
    await s.findByRole('heading', { name: 'فشلت المعاملة' })
  },
}
