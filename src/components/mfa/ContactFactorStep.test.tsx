import { latestCode } from '@latchkey/service/testing'
import { screen, waitFor } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it } from 'vitest'
import { createMfaPolicy } from '../../core/actions/activities/createMfaPolicy.ts'
import { createWallet } from '../../core/actions/activities/createWallet.ts'
import { SignMessageDialog } from '../sign/SignMessageDialog.tsx'
import { signedInClient } from '../test/renderWithService.tsx'

/** A user signed in by e-mail (verified) under a policy "signing needs an e-mailed code" asks to sign. */
async function heldSignature() {
  const user = userEvent.setup()
  const { client, render, service } = await signedInClient({}, 'cora@example.com')
  const { addresses } = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
  await createMfaPolicy(client, {
    mfaPolicyName: 'signing needs an e-mailed code',
    condition: "activity.action == 'SIGN'",
    requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_EMAIL_OTP' }] }],
    order: 0,
  })
  const signed: string[] = []
  render(
    <SignMessageDialog
      open
      onOpenChange={() => {}}
      address={addresses[0]!}
      message="hello"
      onSigned={(result) => signed.push(result.signature)}
    />,
  )
  await user.click(await screen.findByRole('button', { name: 'Sign' }))
  return { user, service, signed }
}

describe('the e-mail/SMS factor of the step-up', () => {
  it('"Email me a code" sends one to the masked address; a wrong code says so with focus back, the right one signs once', async () => {
    const { user, service, signed } = await heldSignature()
    const send = await screen.findByRole('button', { name: 'Email me a code' }, { timeout: 10_000 })
    // The only factor offered: focus starts on it, and no authenticator-code field is shown.
    await waitFor(() => expect(document.activeElement).toBe(send))
    expect(screen.queryByRole('textbox', { name: 'Authenticator code' })).toBeNull()
    await user.keyboard('{Enter}')
    expect(await screen.findByText(/We sent a code to c\*\*\*@example\.com/)).toBeTruthy()
    const field = screen.getByRole('textbox', { name: 'Code from the message' }) as HTMLInputElement
    expect(field.getAttribute('autocomplete')).toBe('one-time-code')
    await waitFor(() => expect(document.activeElement).toBe(field))

    const code = await latestCode(service, 'cora@example.com')
    const wrong = code === '000000' ? '111111' : '000000'
    await user.type(field, `${wrong}{Enter}`)
    expect(await screen.findByText(/That code isn’t right, or it expired/)).toBeTruthy()
    await waitFor(() => expect(document.activeElement).toBe(field))
    expect(field.getAttribute('aria-invalid')).toBe('true')
    expect(signed).toEqual([])

    await user.clear(field)
    await user.type(field, '12{Enter}')
    expect(await screen.findByText(/Enter the 6 to 9 characters/)).toBeTruthy()
    await user.clear(field)
    await user.type(field, `${code}{Enter}`)
    expect(await screen.findByText('Signature', {}, { timeout: 10_000 })).toBeTruthy()
    expect(signed).toHaveLength(1)
  })
})
