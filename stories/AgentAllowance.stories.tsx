import type { Meta, StoryObj } from '@storybook/react-vite'
import { expect, userEvent, within } from 'storybook/test'
import { AgentAllowance } from '../src/components/index.ts'
import { liveDecorators } from './support/live.tsx'

// Issue 37: <AgentAllowance/> in each state, live against the in-page service.
const KEY = `02${'ab'.repeat(32)}`

const meta = {
  title: 'Account/AgentAllowance',
  component: AgentAllowance,
  ...liveDecorators,
  args: { caip2: 'eip155:31337' },
  parameters: {
    layout: 'padded',
    live: { signedIn: true, wallets: [{ walletName: 'Everyday', chains: ['ethereum'] }] },
  },
  decorators: [
    (Story) => (
      <div style={{ maxInlineSize: 560, marginInline: 'auto' }}>
        <Story />
      </div>
    ),
    ...liveDecorators.decorators,
  ],
} satisfies Meta<typeof AgentAllowance>
export default meta
type Story = StoryObj<typeof meta>

export const Empty: Story = {
  play: async ({ canvasElement }) => {
    await within(canvasElement).findByText('No agent has an allowance.')
  },
}
export const EmptyArabic: Story = {
  globals: { locale: 'ar' },
  play: async ({ canvasElement }) => {
    await within(canvasElement).findByText('لا يملك أي وكيل مخصصًا.')
  },
}

/** The grant form, opened, with the app's key for the agent. */
export const Granting: Story = {
  args: { agentPublicKey: KEY, defaultAgentName: 'Shopping agent' },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Grant an allowance' }))
    await canvas.findByRole('textbox', { name: 'Agent name' })
    await userEvent.type(canvas.getByRole('textbox', { name: 'Amount (ETH)' }), '0.01')
  },
}

/** Grant waiting for a second factor: the user has an MFA policy, so adding the agent's user waits for a code. */
export const GrantWaitingForSecondFactor: Story = {
  // A key the service accepts (P-256's generator point, compressed): the story submits it.
  args: {
    agentPublicKey: '036b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296',
    defaultAgentName: 'Shopping agent',
  },
  parameters: { live: { signedIn: true, mfa: { policies: ['exports'] } } },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Grant an allowance' }))
    await userEvent.type(await canvas.findByRole('textbox', { name: 'Amount (ETH)' }), '0.01{Enter}')
    await canvas.findByRole('textbox', { name: 'Authenticator code' })
  },
}

export const ValidationError: Story = {
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Grant an allowance' }))
    const form = await canvas.findByRole('form', { name: 'Grant an allowance' })
    await userEvent.type(within(form).getByRole('textbox', { name: 'Agent public key' }), '04abc')
    await userEvent.click(within(form).getByRole('button', { name: 'Grant an allowance' }))
    await canvas.findByText('Enter a name for the agent.')
    await canvas.findByText(/^Enter a compressed P-256 public key/)
  },
}
export const ValidationErrorSpanish: Story = {
  ...ValidationError,
  globals: { locale: 'es' },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Conceder una asignación' }))
    const form = await canvas.findByRole('form', { name: 'Conceder una asignación' })
    await userEvent.click(within(form).getByRole('button', { name: 'Conceder una asignación' }))
    await canvas.findByText('Escribe un nombre para el agente.')
  },
}

/** An agent granted 0.01 ETH a day that has spent 0.004 ETH of it. */
export const GrantedWithUsage: Story = {
  parameters: {
    live: {
      signedIn: true,
      wallets: [{ walletName: 'Everyday', chains: ['ethereum'] }],
      agent: { spentWei: 4_000_000_000_000_000n },
    },
  },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await canvas.findByText('0.006 ETH left today')
    await expect(canvas.getByText('0.004 ETH of 0.01 ETH')).toBeTruthy()
  },
}
export const GrantedWithUsageDark: Story = { ...GrantedWithUsage, globals: { theme: 'dark' } }
export const GrantedWithUsageArabic: Story = {
  ...GrantedWithUsage,
  globals: { locale: 'ar' },
  play: async ({ canvasElement }) => {
    await within(canvasElement).findByText('يتبقى 0.006 ETH اليوم')
  },
}

/** The whole allowance spent: the agent's next spend is refused. */
export const Refused: Story = {
  parameters: {
    live: {
      signedIn: true,
      wallets: [{ walletName: 'Everyday', chains: ['ethereum'] }],
      agent: { spentWei: 10_000_000_000_000_000n },
    },
  },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await canvas.findByText('Limit reached')
    await canvas.findByText('0 ETH left today')
  },
}

/** "Revoke the allowance of Shopping agent?": asked under the row, focus on "Yes, revoke". */
export const ConfirmRevoke: Story = {
  ...GrantedWithUsage,
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(
      await canvas.findByRole('button', { name: 'Revoke the allowance of Shopping agent' }),
    )
    await canvas.findByRole('button', { name: 'Yes, revoke' })
  },
}

export const Revoked: Story = {
  ...GrantedWithUsage,
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(
      await canvas.findByRole('button', { name: 'Revoke the allowance of Shopping agent' }),
    )
    await userEvent.click(await canvas.findByRole('button', { name: 'Yes, revoke' }))
    await canvas.findByText('The allowance of Shopping agent is revoked. Its key can no longer sign.')
    await canvas.findByText('No agent has an allowance.')
  },
}

/** Revoke waiting for a second factor: the user has an MFA policy; until the code is given the agent's key still signs, and the step says so. */
export const RevokeWaitingForSecondFactor: Story = {
  parameters: {
    live: {
      signedIn: true,
      wallets: [{ walletName: 'Everyday', chains: ['ethereum'] }],
      agent: { spentWei: 4_000_000_000_000_000n },
      mfa: { policies: ['exports'] },
    },
  },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(
      await canvas.findByRole('button', { name: 'Revoke the allowance of Shopping agent' }),
    )
    await userEvent.click(await canvas.findByRole('button', { name: 'Yes, revoke' }))
    await canvas.findByRole('textbox', { name: 'Authenticator code' })
    await canvas.findByText('Shopping agent can still sign until you enter the code.')
  },
}

/** That revoke cancelled (Escape): not revoked, and the notice says the agent still signs. */
export const RevokeCancelled: Story = {
  ...RevokeWaitingForSecondFactor,
  play: async (context) => {
    await RevokeWaitingForSecondFactor.play?.(context)
    const canvas = within(context.canvasElement)
    await userEvent.keyboard('{Escape}')
    await canvas.findByText('Not revoked: Shopping agent can still sign.')
  },
}

/** An ERC-20 allowance (25 USDC a day) of which the agent transferred 10.5 USDC: amounts in USDC. */
export const TokenAllowance: Story = {
  parameters: {
    live: {
      signedIn: true,
      wallets: [{ walletName: 'Everyday', chains: ['ethereum'] }],
      agent: { token: { spent: 10_500_000n } },
    },
  },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await canvas.findByText('14.5 USDC left today')
    await expect(canvas.getByText('10.5 USDC of 25 USDC')).toBeTruthy()
  },
}
export const TokenAllowanceArabic: Story = {
  ...TokenAllowance,
  globals: { locale: 'ar' },
  play: async ({ canvasElement }) => {
    await within(canvasElement).findByText('10.5 USDC من 25 USDC')
  },
}

/**
 * An SPL allowance (25 USDC a day on Solana) of which the agent transferred 10.5 USDC with a
 * `TransferChecked`: amounts in USDC, and the token's mint.
 */
export const SplTokenAllowance: Story = {
  args: { caip2: 'solana:mainnet' },
  parameters: {
    live: {
      signedIn: true,
      wallets: [{ walletName: 'Everyday', chains: ['solana'] }],
      agent: { spl: { spent: 10_500_000n } },
    },
  },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await canvas.findByText('14.5 USDC left today')
    await expect(canvas.getByText('10.5 USDC of 25 USDC')).toBeTruthy()
    await expect(canvas.getByText('Token mint')).toBeTruthy()
  },
}

/** The grant form in an ERC-20 token: its contract, symbol and decimals, each checked. */
export const GrantingToken: Story = {
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Grant an allowance' }))
    const form = await canvas.findByRole('form', { name: 'Grant an allowance' })
    await userEvent.selectOptions(within(form).getByRole('combobox', { name: 'Asset' }), 'token')
    await userEvent.type(within(form).getByRole('textbox', { name: 'Symbol' }), 'USDC')
    const decimals = within(form).getByRole('textbox', { name: 'Decimals' })
    await userEvent.clear(decimals)
    await userEvent.type(decimals, '6')
    await userEvent.type(within(form).getByRole('textbox', { name: 'Amount (USDC)' }), '25.0000001')
    await userEvent.click(within(form).getByRole('button', { name: 'Grant an allowance' }))
    await canvas.findByText('Enter an amount above 0 with at most 6 decimals.')
    await expect(
      canvas.getByText('Enter the token’s contract address (0x and 40 hex characters).'),
    ).toBeTruthy()
  },
}

/** The grant form on a Solana cluster, in an SPL token: its mint (base58), symbol and decimals. */
export const GrantingSplToken: Story = {
  args: { caip2: 'solana:mainnet' },
  parameters: {
    live: { signedIn: true, wallets: [{ walletName: 'Everyday', chains: ['solana'] }] },
  },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Grant an allowance' }))
    const form = await canvas.findByRole('form', { name: 'Grant an allowance' })
    await canvas.findByRole('textbox', { name: 'Amount (SOL)' })
    await userEvent.selectOptions(within(form).getByRole('combobox', { name: 'Asset' }), 'token')
    await userEvent.type(within(form).getByRole('textbox', { name: 'Token mint' }), '0xdead')
    await userEvent.type(within(form).getByRole('textbox', { name: 'Symbol' }), 'USDC')
    await userEvent.type(within(form).getByRole('textbox', { name: 'Amount (USDC)' }), '25')
    await userEvent.click(within(form).getByRole('button', { name: 'Grant an allowance' }))
    await canvas.findByText('Enter the token’s mint address (32 to 44 base58 characters).')
  },
}
