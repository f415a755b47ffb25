import { screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it } from 'vitest'
import { createWallet } from '../../core/actions/activities/createWallet.ts'
import { ethereumAddressOf, recoverEip191PublicKey } from '../../core/stampers/eip191.ts'
import { en } from '../i18n/en.ts'
import { signedInClient } from '../test/renderWithService.tsx'
import { HIDDEN } from '../ui/hiddenChars.ts'
import { SignMessageDialog, type SignMessageResult } from './SignMessageDialog.tsx'

/**
 * The dialog open on "Hello, Latchkey" for a signed-in user with a wallet on `chain` (the dialog
 * told its address, or left to find it), and what it signed.
 */
async function dialogWith(chain: 'ethereum' | 'xrp', naming: boolean) {
  const user = userEvent.setup()
  const { client, render } = await signedInClient()
  const { addresses } = await createWallet(client, { walletName: 'Main', chains: [chain] })
  const signed: SignMessageResult[] = []
  render(
    <SignMessageDialog
      open
      onOpenChange={() => {}}
      message="Hello, Latchkey"
      {...(naming ? { address: addresses[0]! } : {})}
      onSigned={(r) => signed.push(r)}
    />,
  )
  return { user, addresses, signed }
}

describe('<SignMessageDialog/>', () => {
  it('shows the message and account, signs with the service and shows a valid EIP-191 signature', async () => {
    const { user, addresses, signed } = await dialogWith('ethereum', false)
    expect(await screen.findByText(addresses[0]!)).toBeTruthy()
    expect(screen.getByText('Hello, Latchkey')).toBeTruthy()
    await user.click(screen.getByRole('button', { name: 'Sign' }))
    expect(await screen.findByRole('heading', { name: 'Message signed' }, { timeout: 10_000 })).toBeTruthy()
    expect(signed).toHaveLength(1)
    const { signature } = signed[0]!
    expect(screen.getByText(signature)).toBeTruthy()
    const publicKey = recoverEip191PublicKey(new TextEncoder().encode('Hello, Latchkey'), signature)
    expect(ethereumAddressOf(publicKey)).toBe(addresses[0]!.toLowerCase())
  })

  it('cannot sign without an account and closes on Cancel', async () => {
    const user = userEvent.setup()
    const { render } = await signedInClient()
    const changes: boolean[] = []
    render(<SignMessageDialog open onOpenChange={(o) => changes.push(o)} message="x" />)
    expect(await screen.findByText('No wallets yet')).toBeTruthy()
    expect(screen.getByRole('button', { name: 'Sign' })).toHaveProperty('disabled', true)
    await user.click(screen.getByRole('button', { name: 'Cancel' }))
    expect(changes).toEqual([false])
  })

  it('says why it does not sign with an account whose chain has no message format, and offers no retry', async () => {
    const { user, signed } = await dialogWith('xrp', true)
    await user.click(await screen.findByRole('button', { name: 'Sign' }))
    expect(
      await screen.findByText('This account’s network has no message signing here, so nothing was signed.'),
    ).toBeTruthy()
    expect(screen.getByRole('button', { name: 'Sign' })).toHaveProperty('disabled', true)
    expect(signed).toEqual([])
  })
})

/**
 * The dialog shows the message as it will be signed. A right-to-left override applied on screen
 * made "Pay \u202E1000\u202C USDC" read "Pay 0001 USDC" while the signature is over "1000", and a
 * zero-width space showed as nothing: each such character is shown as a marked U+XXXX instead,
 * with a warning, as <ActivityApproval/> does.
 */
describe('<SignMessageDialog/> and text that reads differently on screen', () => {
  it('marks bidi and zero-width characters as U+ codes, warns, and signs the text with them in it', async () => {
    const user = userEvent.setup()
    const { client, render } = await signedInClient()
    const { addresses } = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
    const message = 'Pay \u202E1000\u202C USDC to the\u200B merchant'
    const signed: SignMessageResult[] = []
    render(
      <SignMessageDialog open onOpenChange={() => {}} message={message} onSigned={(r) => signed.push(r)} />,
    )
    expect(await screen.findByText(addresses[0]!)).toBeTruthy()
    const shown = document.querySelector('pre.lk-code')!
    expect(HIDDEN.test(shown.textContent ?? '')).toBe(false)
    // Seen: each code in a mark; heard: "hidden character U+202E".
    expect([...shown.querySelectorAll('[data-lk-hidden-char]')].map((mark) => mark.textContent)).toEqual([
      `${en.hiddenChar} U+202E`,
      `${en.hiddenChar} U+202C`,
      `${en.hiddenChar} U+200B`,
    ])
    expect(shown.textContent).toBe(
      `Pay ${en.hiddenChar} U+202E1000${en.hiddenChar} U+202C USDC to the${en.hiddenChar} U+200B merchant`,
    )
    expect(within(screen.getByRole('dialog')).getByRole('status').textContent).toBe(en.hiddenCharsWarning)

    // What is signed is the message itself, the override in it (not the marks).
    await user.click(screen.getByRole('button', { name: 'Sign' }))
    expect(await screen.findByRole('heading', { name: 'Message signed' }, { timeout: 10_000 })).toBeTruthy()
    expect(signed[0]!.message).toBe(message)
    const publicKey = recoverEip191PublicKey(new TextEncoder().encode(message), signed[0]!.signature)
    expect(ethereumAddressOf(publicKey)).toBe(addresses[0]!.toLowerCase())
  })

  it('shows a message without such characters as it is, and no warning', async () => {
    const { addresses } = await dialogWith('ethereum', false)
    expect(await screen.findByText(addresses[0]!)).toBeTruthy()
    expect(document.querySelector('pre.lk-code')!.textContent).toBe('Hello, Latchkey')
    expect(document.querySelector('[data-lk-hidden-char]')).toBeNull()
    expect(within(screen.getByRole('dialog')).queryByRole('status')).toBeNull()
  })
})
