import type { Meta, StoryObj } from '@storybook/react-vite'
import { expect, userEvent, within } from 'storybook/test'
import { SpendingLimits } from '../src/components/index.ts'
import { liveDecorators } from './support/live.tsx'

// Issue 37: <SpendingLimits/> (the user's limits on their whole account) in each state, live
// against the in-page service.
const WALLETS = [{ walletName: 'Everyday', chains: ['ethereum' as const] }]
/** 0.65 ETH of a 1 ETH daily limit on the user's whole account already signed. */
const USED = { signedIn: true, wallets: WALLETS, limits: { spentWei: 650_000_000_000_000_000n } }

const meta = {
  title: 'Account/SpendingLimits',
  component: SpendingLimits,
  ...liveDecorators,
  args: { caip2: 'eip155:31337' },
  parameters: { layout: 'padded', live: { signedIn: true, wallets: WALLETS } },
  decorators: [
    (Story) => (
      <div style={{ maxInlineSize: 560, marginInline: 'auto' }}>
        <Story />
      </div>
    ),
    ...liveDecorators.decorators,
  ],
} satisfies Meta<typeof SpendingLimits>
export default meta
type Story = StoryObj<typeof meta>

export const Empty: Story = {
  play: async ({ canvasElement }) => {
    await within(canvasElement).findByText('No spending limit is set.')
  },
}
export const EmptyArabic: Story = {
  globals: { locale: 'ar' },
  play: async ({ canvasElement }) => {
    await within(canvasElement).findByText('لم يُعيَّن أي حد للإنفاق.')
  },
}

/** The form to set a limit, opened: amount, period, and which accounts it covers. */
export const Setting: Story = {
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Set a limit' }))
    await userEvent.type(await canvas.findByRole('textbox', { name: 'Amount (ETH)' }), '0.5')
    await canvas.findByRole('combobox', { name: 'Applies to' })
  },
}
export const SettingSpanish: Story = {
  globals: { locale: 'es' },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Fijar un límite' }))
    await canvas.findByRole('combobox', { name: 'Se aplica a' })
  },
}

export const ValidationError: Story = {
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Set a limit' }))
    await userEvent.type(await canvas.findByRole('textbox', { name: 'Amount (ETH)' }), 'a lot{Enter}')
    await canvas.findByText('Enter an amount above 0 with at most 18 decimals.')
  },
}

/** 0.35 ETH of 1 ETH left today, and when it frees. */
export const WithUsage: Story = {
  parameters: { live: USED },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await canvas.findByText('0.35 ETH left today')
    await expect(canvas.getByText('0.65 ETH of 1 ETH')).toBeTruthy()
    await expect(canvas.getByText('All my accounts')).toBeTruthy()
  },
}
export const WithUsageDark: Story = { ...WithUsage, globals: { theme: 'dark' } }
export const WithUsageArabic: Story = {
  ...WithUsage,
  globals: { locale: 'ar' },
  play: async ({ canvasElement }) => {
    await within(canvasElement).findByText('يتبقى 0.35 ETH اليوم')
  },
}

/** The whole limit spent. */
export const Reached: Story = {
  parameters: { live: { ...USED, limits: { spentWei: 10n ** 18n } } },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await canvas.findByText('Limit reached')
    await canvas.findByText('0 ETH left today')
  },
}

/** Changing the amount: the form starts at the current one. */
export const Changing: Story = {
  parameters: { live: USED },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Change Daily limit of 1 ETH' }))
    const amount = await canvas.findByRole('textbox', { name: 'Amount (ETH)' })
    await expect((amount as HTMLInputElement).value).toBe('1')
  },
}

/** Raised to 2 ETH: renamed with its amount, 1.35 ETH left. */
export const Changed: Story = {
  parameters: { live: USED },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Change Daily limit of 1 ETH' }))
    const amount = await canvas.findByRole('textbox', { name: 'Amount (ETH)' })
    await userEvent.clear(amount)
    await userEvent.type(amount, '2{Enter}')
    await canvas.findByText('Daily limit of 2 ETH is changed.')
    await canvas.findByText('1.35 ETH left today')
  },
}

/** An MFA policy holds changes of a limit: the raise waits for the second factor. */
export const RaiseNeedsSecondFactor: Story = {
  parameters: { live: { ...USED, mfa: { policies: ['limitChanges'] } } },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Change Daily limit of 1 ETH' }))
    const amount = await canvas.findByRole('textbox', { name: 'Amount (ETH)' })
    await userEvent.clear(amount)
    await userEvent.type(amount, '5{Enter}')
    await canvas.findByRole('textbox', { name: 'Authenticator code' })
  },
}

/** Any MFA policy on the user (here one on exports) holds a raise: a stolen session cannot lift the cap. */
export const RaiseNeedsSecondFactorWhateverThePolicy: Story = {
  ...RaiseNeedsSecondFactor,
  parameters: { live: { ...USED, mfa: { policies: ['exports'] } } },
}

/** Under the same policy, lowering a cap runs at once. */
export const LowerUnderMfaRunsAtOnce: Story = {
  parameters: { live: { ...USED, mfa: { policies: ['exports'] } } },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Change Daily limit of 1 ETH' }))
    const amount = await canvas.findByRole('textbox', { name: 'Amount (ETH)' })
    await userEvent.clear(amount)
    await userEvent.type(amount, '0.5{Enter}')
    await canvas.findByText('Daily limit of 0.5 ETH is changed.')
    await expect(canvas.queryByRole('textbox', { name: 'Authenticator code' })).toBeNull()
  },
}

export const ConfirmRemove: Story = {
  parameters: { live: USED },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Remove Daily limit of 1 ETH' }))
    await canvas.findByRole('button', { name: 'Yes, remove' })
  },
}

export const Removed: Story = {
  parameters: { live: USED },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Remove Daily limit of 1 ETH' }))
    await userEvent.click(await canvas.findByRole('button', { name: 'Yes, remove' }))
    await canvas.findByText('Daily limit of 1 ETH is removed.')
    await canvas.findByText('No spending limit is set.')
  },
}
