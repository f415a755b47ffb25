import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, describe, expect, it } from 'vitest'
import { createMfaPolicy } from '../../core/actions/activities/createMfaPolicy.ts'
import { getLinkedLogins } from '../../core/actions/queries/getLinkedLogins.ts'
import {
  installSoftAuthenticator,
  latestCode,
  type SoftAuthenticator,
  signedInClient,
} from '../test/renderWithService.tsx'
import { LinkedLogins } from './LinkedLogins.tsx'

const rows = () => screen.getAllByRole('listitem').map((item) => item.getAttribute('data-lk-login'))

describe('<LinkedLogins/>', () => {
  let authenticator: SoftAuthenticator | undefined
  afterEach(() => {
    authenticator?.uninstall()
    authenticator = undefined
  })

  it('asks before unlinking, shows the last-way-in refusal in words, links a passkey, then unlinks the e-mail', async () => {
    authenticator = installSoftAuthenticator()
    const user = userEvent.setup()
    const { client, render } = await signedInClient({}, 'lina@example.com')
    render(<LinkedLogins />)
    await screen.findByText('lina@example.com')
    expect(rows()).toEqual(['email'])
    // An e-mail is already linked: no second one is offered.
    expect(screen.queryByRole('button', { name: 'Link an email' })).toBeNull()

    // Keyboard only: Unlink opens the confirmation with focus on "Yes", Escape goes back.
    const unlinkEmail = screen.getByRole('button', { name: 'Unlink lina@example.com' })
    unlinkEmail.focus()
    await user.keyboard('{Enter}')
    const yes = await screen.findByRole('button', { name: 'Yes, unlink' })
    await waitFor(() => expect(document.activeElement).toBe(yes))
    expect(screen.getByText(/You won’t be able to sign in with it any more/)).toBeTruthy()
    await user.keyboard('{Escape}')
    expect(screen.queryByRole('button', { name: 'Yes, unlink' })).toBeNull()
    await waitFor(() => expect(document.activeElement).toBe(unlinkEmail))

    // The only way in: the service refuses, and the refusal is said in words.
    await user.keyboard('{Enter}')
    await user.click(await screen.findByRole('button', { name: 'Yes, unlink' }))
    const refusal = await screen.findByText(/This is your last way to sign in/)
    expect(refusal).toBeTruthy()
    expect((await getLinkedLogins(client)).logins.map((login) => login.kind)).toEqual(['email'])

    // Link a passkey (the platform's prompt, here a soft authenticator), then the e-mail can go.
    await user.click(screen.getByRole('button', { name: 'Add passkey' }))
    expect(await screen.findByText('Passkey is linked.', {}, { timeout: 10_000 })).toBeTruthy()
    await waitFor(() => expect(rows()).toEqual(['email', 'passkey']))
    await user.click(screen.getByRole('button', { name: 'Unlink lina@example.com' }))
    await user.click(await screen.findByRole('button', { name: 'Yes, unlink' }))
    const done = await screen.findByText('lina@example.com is unlinked.')
    await waitFor(() => expect(document.activeElement).toBe(done))
    await waitFor(() => expect(rows()).toEqual(['passkey']))

    // Now the passkey is the last way in.
    const passkey = within(screen.getByRole('list')).getByRole('button', { name: /^Unlink Passkey / })
    await user.click(passkey)
    await user.click(await screen.findByRole('button', { name: 'Yes, unlink' }))
    expect(await screen.findByText(/This is your last way to sign in/)).toBeTruthy()
    expect((await getLinkedLogins(client)).logins.map((login) => login.kind)).toEqual(['passkey'])
  })

  it('links an e-mail proven by a code: a wrong code says so, the right one leaves it verified (it signs in)', async () => {
    authenticator = installSoftAuthenticator()
    const user = userEvent.setup()
    const { client, session, render, service, signIn } = await signedInClient({}, 'mara@example.com')
    render(<LinkedLogins />)
    await screen.findByText('mara@example.com')
    await user.click(screen.getByRole('button', { name: 'Add passkey' }))
    await screen.findByText('Passkey is linked.', {}, { timeout: 10_000 })
    await user.click(screen.getByRole('button', { name: 'Unlink mara@example.com' }))
    await user.click(await screen.findByRole('button', { name: 'Yes, unlink' }))
    await screen.findByText('mara@example.com is unlinked.')

    await user.click(await screen.findByRole('button', { name: 'Link an email' }))
    const address = await screen.findByRole('textbox', { name: 'Email address' })
    await waitFor(() => expect(document.activeElement).toBe(address))
    await user.type(address, 'not-an-address{Enter}')
    expect(await screen.findByText('Enter a valid email address.')).toBeTruthy()
    await user.clear(address)
    await user.type(address, 'mara.new@example.com{Enter}')
    const field = await screen.findByRole('textbox', { name: 'Code from the message' })
    await waitFor(() => expect(document.activeElement).toBe(field))
    const code = await latestCode(service, 'mara.new@example.com')
    await user.type(field, `${code === '000000' ? '111111' : '000000'}{Enter}`)
    expect(await screen.findByText(/That code isn’t right, or it expired/)).toBeTruthy()
    await user.clear(field)
    await user.type(field, `${code}{Enter}`)
    expect(await screen.findByText('mara.new@example.com is linked.', {}, { timeout: 10_000 })).toBeTruthy()
    await waitFor(() => expect(rows()).toEqual(['email', 'passkey']))

    // Verified: an e-mail sign-in with the new address reaches this same account.
    const again = await signIn('mara.new@example.com')
    expect(again.created).toBe(false)
    expect(again.session.organizationId).toBe(session.organizationId)
    expect((await getLinkedLogins(client)).logins[0]).toMatchObject({ label: 'mara.new@example.com' })
  })

  it('an MFA policy on the user shows the step-up; after the e-mailed code the passkey is unlinked once', async () => {
    authenticator = installSoftAuthenticator()
    const user = userEvent.setup()
    const { client, render, service } = await signedInClient({}, 'noor@example.com')
    render(<LinkedLogins />)
    await screen.findByText('noor@example.com')
    await user.click(screen.getByRole('button', { name: 'Add passkey' }))
    await screen.findByText('Passkey is linked.', {}, { timeout: 10_000 })
    await createMfaPolicy(client, {
      mfaPolicyName: 'an e-mailed code for account changes',
      condition: "activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2'",
      requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_EMAIL_OTP' }] }],
      order: 0,
    })

    await user.click(within(screen.getByRole('list')).getByRole('button', { name: /^Unlink Passkey / }))
    await user.click(await screen.findByRole('button', { name: 'Yes, unlink' }))
    const send = await screen.findByRole('button', { name: 'Email me a code' }, { timeout: 10_000 })
    await waitFor(() => expect(document.activeElement).toBe(send))
    // Held, not done: the passkey is still there.
    expect((await getLinkedLogins(client)).logins.map((login) => login.kind)).toEqual(['email', 'passkey'])
    await user.keyboard('{Enter}')
    const field = await screen.findByRole('textbox', { name: 'Code from the message' })
    await user.type(field, `${await latestCode(service, 'noor@example.com')}{Enter}`)
    expect(await screen.findByText(/^Passkey .* is unlinked\.$/, {}, { timeout: 10_000 })).toBeTruthy()
    await waitFor(() => expect(rows()).toEqual(['email']))
    expect((await getLinkedLogins(client)).logins.map((login) => login.kind)).toEqual(['email'])
  })
})
