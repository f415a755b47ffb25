import type { Meta, StoryObj } from '@storybook/react-vite'
import { expect, userEvent, within } from 'storybook/test'
import { SecuritySettings } from '../src/components/index.ts'
import { totpCode } from '../src/core/test/totpCode.ts'
import { type Live, liveDecorators } from './support/live.tsx'

// Issue 38: <SecuritySettings/> in each state, live against the in-page service.
const meta = {
  title: 'Account/SecuritySettings',
  component: SecuritySettings,
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
} satisfies Meta<typeof SecuritySettings>
export default meta
type Story = StoryObj<typeof meta>

/** Codes no TOTP window around now accepts. */
const wrongCode = (secret: string) => {
  const now = Date.now()
  const valid = new Set([-30_000, 0, 30_000, 60_000].map((d) => totpCode(secret, now + d)))
  return ['111111', '222222', '333333', '444444', '555555'].find((c) => !valid.has(c))!
}

/** No second factor yet: the rules say what they need first. */
export const Empty: Story = {
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await canvas.findByRole('button', { name: 'Create recovery codes' })
    await canvas.findByText(/Add a passkey first/)
  },
}
export const EmptySpanish: Story = {
  globals: { locale: 'es' },
  play: async ({ canvasElement }) => {
    await within(canvasElement).findByRole('button', { name: 'Crear códigos de recuperación' })
  },
}
export const EmptyArabic: Story = {
  globals: { locale: 'ar' },
  play: async ({ canvasElement }) => {
    await within(canvasElement).findByRole('button', { name: 'إنشاء رموز الاسترداد' })
  },
}

/** An authenticator app, ten recovery codes and "exports need a second factor". */
export const Protected: Story = {
  parameters: { live: { signedIn: true, mfa: { recoveryCodes: true, policies: ['exports'] } } },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await canvas.findByText('10 left')
    await canvas.findByRole('button', { name: 'Remove the authenticator app Phone' })
    const rule = canvas.getByRole('checkbox', { name: 'Exporting a wallet or key needs a second factor' })
    await expect((rule as HTMLInputElement).checked).toBe(true)
  },
}
export const ProtectedDark: Story = { ...Protected, globals: { theme: 'dark' } }
export const ProtectedArabic: Story = {
  ...Protected,
  globals: { locale: 'ar' },
  play: async ({ canvasElement }) => {
    await within(canvasElement).findByText('متبقٍّ 10')
  },
}

/** Enrolment: the QR code, the key and the otpauth:// link to copy, and the first code. */
export const Enrolling: Story = {
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Add an authenticator app' }))
    await canvas.findByRole('img', { name: 'QR code of your authenticator app’s key' })
    await canvas.findByText(/^otpauth:\/\/totp\//)
  },
}
export const EnrollingArabic: Story = {
  globals: { locale: 'ar' },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'إضافة تطبيق مصادقة' }))
    await canvas.findByRole('img', { name: 'رمز QR لمفتاح تطبيق المصادقة' })
  },
}

/** A wrong first code: said in words, focus back in the field. */
export const EnrolWrongCode: Story = {
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Add an authenticator app' }))
    await canvas.findByRole('img', { name: 'QR code of your authenticator app’s key' })
    const secret = canvasElement.querySelector('[data-lk-totp-secret]')?.textContent ?? ''
    const field = canvas.getByRole('textbox', { name: 'Enter a code to finish' })
    await userEvent.type(field, `${wrongCode(secret)}{Enter}`)
    await canvas.findByText(/That code isn’t right/)
  },
}

/** The right first code: the app is on, and the page says so. */
export const Enrolled: Story = {
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Add an authenticator app' }))
    await canvas.findByRole('img', { name: 'QR code of your authenticator app’s key' })
    const secret = canvasElement.querySelector('[data-lk-totp-secret]')?.textContent ?? ''
    await userEvent.type(
      canvas.getByRole('textbox', { name: 'Enter a code to finish' }),
      `${totpCode(secret)}{Enter}`,
    )
    await canvas.findByText(/Your authenticator app is on/)
  },
}

/** Recovery codes, shown once, with copy and download. */
export const RecoveryCodes: Story = {
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Create recovery codes' }))
    await canvas.findByRole('heading', { name: 'Your recovery codes' })
    await canvas.findByRole('button', { name: 'Download (.txt)' })
  },
}
export const RecoveryCodesSpanish: Story = {
  globals: { locale: 'es' },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Crear códigos de recuperación' }))
    await canvas.findByRole('heading', { name: 'Tus códigos de recuperación' })
  },
}

/**
 * Removing the only factor a policy can be proven with (no passkey, no recovery codes): refused at
 * once, in words, before a code is asked.
 */
export const RemoveOnlyFactorRefused: Story = {
  parameters: { live: { signedIn: true, mfa: { policies: ['exports'] } } },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Remove the authenticator app Phone' }))
    await canvas.findByText(/only way left to prove one of your rules/)
  },
}

/** Removing the factor under a policy its recovery codes still prove: the step-up challenge comes first. */
export const RemoveAsksForCode: Story = {
  parameters: { live: { signedIn: true, mfa: { policies: ['exports'], recoveryCodes: true } } },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Remove the authenticator app Phone' }))
    await canvas.findByRole('textbox', { name: 'Authenticator code' })
  },
}

/** …and the right code removes it. */
export const Removed: Story = {
  parameters: { live: { signedIn: true, mfa: { policies: ['exports'], recoveryCodes: true } } },
  play: async ({ canvasElement, loaded }) => {
    const canvas = within(canvasElement)
    await userEvent.click(await canvas.findByRole('button', { name: 'Remove the authenticator app Phone' }))
    const field = await canvas.findByRole('textbox', { name: 'Authenticator code' })
    const secret = (loaded.live as Live).totpSecret as string
    await userEvent.type(field, `${totpCode(secret, Date.now() + 30_000)}{Enter}`)
    await canvas.findByText('The authenticator app Phone is removed.')
  },
}

/** A signed-in user with one passkey, which the sends rule needs. */
const withPasskey = { live: { signedIn: true, passkey: true } }

/** With a passkey: "sends above an amount need a passkey" can be set, at 0.1 ETH to begin with. */
export const SendsRule: Story = {
  parameters: withPasskey,
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(
      await canvas.findByRole('checkbox', { name: 'Sends above an amount need a passkey' }),
    )
    const amount = canvas.getByRole('textbox', { name: 'Amount (ETH)' }) as HTMLInputElement
    await expect(amount.value).toBe('0.1')
    await userEvent.clear(amount)
    await userEvent.type(amount, '0.25')
    await userEvent.click(canvas.getByRole('button', { name: 'Save' }))
    await canvas.findByText('Saved.')
  },
}
export const SendsRuleDark: Story = { ...SendsRule, globals: { theme: 'dark' } }

/** The amount in the user's decimal mark, and one that reads two ways refused with both readings. */
export const SendsRuleAmountTwoWays: Story = {
  parameters: withPasskey,
  globals: { locale: 'es' },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(
      await canvas.findByRole('checkbox', {
        name: 'Los envíos por encima de un importe requieren una llave de acceso',
      }),
    )
    const amount = canvas.getByRole('textbox', { name: 'Importe (ETH)' }) as HTMLInputElement
    await expect(amount.value).toBe('0,1')
    await userEvent.clear(amount)
    await userEvent.type(amount, '1.000')
    await userEvent.click(canvas.getByRole('button', { name: 'Guardar' }))
    await expect((await canvas.findByRole('alert')).textContent).toBe(
      '«1.000» puede ser 1000 o 1,000. Escribe el importe sin separador de miles.',
    )
    await expect(amount.getAttribute('aria-invalid')).toBe('true')
  },
}
export const SendsRuleArabic: Story = {
  parameters: withPasskey,
  globals: { locale: 'ar' },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement)
    await userEvent.click(
      await canvas.findByRole('checkbox', { name: 'يتطلب الإرسال فوق مبلغ معيّن مفتاح مرور' }),
    )
    await canvas.findByRole('textbox', { name: 'المبلغ (ETH)' })
  },
}
