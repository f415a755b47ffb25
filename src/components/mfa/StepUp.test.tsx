import { screen, waitFor } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it } from 'vitest'
import { confirmTotpFactor } from '../../core/actions/activities/confirmTotpFactor.ts'
import { createMfaPolicy } from '../../core/actions/activities/createMfaPolicy.ts'
import { createRecoveryCodes } from '../../core/actions/activities/createRecoveryCodes.ts'
import { createTotpFactor } from '../../core/actions/activities/createTotpFactor.ts'
import { createWallet } from '../../core/actions/activities/createWallet.ts'
import { totpCode } from '../../core/test/totpCode.ts'
import { SignMessageDialog } from '../sign/SignMessageDialog.tsx'
import { signedInClient } from '../test/renderWithService.tsx'

/** A signed-in user with a confirmed TOTP factor and an MFA policy on signing. */
async function userWithMfa() {
  const fixture = await signedInClient()
  const { client } = fixture
  const { factorId, secret } = await createTotpFactor(client, {})
  await confirmTotpFactor(client, { factorId, code: totpCode(secret) })
  const { recoveryCodes } = await createRecoveryCodes(client, {})
  const { addresses } = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
  await createMfaPolicy(client, {
    mfaPolicyName: 'signing needs a code',
    condition: "activity.action == 'SIGN'",
    requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] }],
    order: 0,
  })
  return { ...fixture, secret, recoveryCodes, address: addresses[0]! }
}

/** A user under a TOTP policy asks to sign in `<SignMessageDialog/>`: the signature is held. */
async function heldSignature() {
  const user = userEvent.setup()
  const { render, secret, recoveryCodes, address } = await userWithMfa()
  const signed: string[] = []
  render(
    <SignMessageDialog
      open
      onOpenChange={() => {}}
      address={address}
      message="hello"
      onSigned={(result) => signed.push(result.signature)}
    />,
  )
  await user.click(await screen.findByRole('button', { name: 'Sign' }))
  return { user, secret, recoveryCodes, signed }
}

describe('step-up in the drop-ins', () => {
  it('a held signature asks for the code: a wrong one says so with focus back in the field, the right one signs once', async () => {
    const { user, secret, signed } = await heldSignature()
    const field = (await screen.findByRole(
      'textbox',
      { name: 'Authenticator code' },
      { timeout: 10_000 },
    )) as HTMLInputElement
    expect(field.getAttribute('autocomplete')).toBe('one-time-code')
    expect(field.getAttribute('inputmode')).toBe('numeric')
    await waitFor(() => expect(document.activeElement).toBe(field))
    expect(screen.getByRole('button', { name: 'Use a recovery code instead' })).toBeTruthy()
    expect(screen.queryByRole('button', { name: 'Use a passkey' })).toBeNull()

    // Keyboard only: a wrong code (none of the window's), then Enter.
    const now = Date.now()
    const valid = new Set([-30_000, 0, 30_000, 60_000].map((d) => totpCode(secret, now + d)))
    const wrong = ['111111', '222222', '333333', '444444', '555555'].find((c) => !valid.has(c))!
    await user.type(field, `${wrong}{Enter}`)
    expect(await screen.findByText(/That code isn’t right/)).toBeTruthy()
    await waitFor(() => expect(document.activeElement).toBe(field))
    expect(field.getAttribute('aria-invalid')).toBe('true')
    expect(signed).toEqual([])

    // The next step's code (the confirmation used this one).
    await user.clear(field)
    await user.type(field, `${totpCode(secret, Date.now() + 30_000)}{Enter}`)
    expect(await screen.findByText('Signature', {}, { timeout: 10_000 })).toBeTruthy()
    expect(signed).toHaveLength(1)
    expect(signed[0]).toMatch(/^0x[0-9a-f]{130}$/)
  })

  it('a recovery code finishes it instead; a malformed one is refused before it is sent', async () => {
    const { user, recoveryCodes, signed } = await heldSignature()
    await user.click(
      await screen.findByRole('button', { name: 'Use a recovery code instead' }, { timeout: 10_000 }),
    )
    const field = screen.getByRole('textbox', { name: 'Recovery code' })
    await user.type(field, 'ABC{Enter}')
    expect(await screen.findByText(/A recovery code has 10 letters and digits/)).toBeTruthy()
    await user.clear(field)
    await user.type(field, `${recoveryCodes[0]!.toLowerCase()}{Enter}`)
    expect(await screen.findByText('Signature', {}, { timeout: 10_000 })).toBeTruthy()
    expect(signed).toHaveLength(1)
  })
})
