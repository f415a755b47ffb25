import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it } from 'vitest'
import { createMfaPolicy } from '../../core/actions/activities/createMfaPolicy.ts'
import { addPasskey } from '../../core/actions/auth/addPasskey.ts'
import { getUser } from '../../core/actions/queries/getUser.ts'
import { installSoftAuthenticator, latestCode, signedInClient } from '../test/renderWithService.tsx'
import { UserProfile } from './UserProfile.tsx'

describe('<UserProfile/>', () => {
  it('shows the user, renames them, and logs another session out', async () => {
    const user = userEvent.setup()
    const { client, session, signIn, render } = await signedInClient()
    const other = (await signIn('ana.work@example.com')).session
    client.store.setState({ activeId: session.id })
    render(<UserProfile />)
    const name = await screen.findByRole('textbox', { name: 'Name' })
    expect((name as HTMLInputElement).value).toBe('Ana')
    expect(screen.getAllByText('ana@example.com').length).toBeGreaterThan(0)
    expect(screen.getByText('No passkeys yet.')).toBeTruthy()

    await user.clear(name)
    await user.type(name, 'Ana García')
    await user.click(screen.getByRole('button', { name: 'Save' }))
    expect(await screen.findByText('Name saved.', undefined, { timeout: 10_000 })).toBeTruthy()
    expect((await getUser(client, { userId: session.userId })).user.userName).toBe('Ana García')

    const sessions = screen.getByRole('heading', { name: 'Active sessions' }).parentElement!
    expect(within(sessions).getAllByRole('listitem')).toHaveLength(2)
    await user.click(within(sessions).getByRole('button', { name: 'Sign out of ana.work@example.com' }))
    await waitFor(() => expect(within(sessions).getAllByRole('listitem')).toHaveLength(1))
    expect(client.store.getState().sessions[other.id]).toBeUndefined()
    expect(within(sessions).getByText('This session')).toBeTruthy()
  })

  it('leaves the sessions to the page with showSessions={false}', async () => {
    const { signIn, render } = await signedInClient()
    await signIn('ana.work@example.com')
    render(<UserProfile showSessions={false} />)
    expect(await screen.findByRole('textbox', { name: 'Name' })).toBeTruthy()
    expect(screen.queryByRole('heading', { name: 'Active sessions' })).toBeNull()
    expect(screen.queryByRole('button', { name: /sign out|log out/i })).toBeNull()
  })

  it('"Remove passkey" under an MFA policy shows the step-up, then removes it once', async () => {
    const authenticator = installSoftAuthenticator()
    try {
      const user = userEvent.setup()
      const { client, render, service, session } = await signedInClient({}, 'pia@example.com')
      await addPasskey(client, { authenticatorName: 'Laptop' })
      await createMfaPolicy(client, {
        mfaPolicyName: 'an e-mailed code for account changes',
        condition: "activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2'",
        requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_EMAIL_OTP' }] }],
        order: 0,
      })
      render(<UserProfile showSessions={false} />)
      await user.click(await screen.findByRole('button', { name: 'Remove passkey Laptop' }))
      await user.click(await screen.findByRole('button', { name: 'Email me a code' }, { timeout: 10_000 }))
      const field = await screen.findByRole('textbox', { name: 'Code from the message' })
      expect((await getUser(client, { userId: session.userId })).user.authenticators).toHaveLength(1)
      await user.type(field, `${await latestCode(service, 'pia@example.com')}{Enter}`)
      await waitFor(() => expect(screen.queryByRole('button', { name: 'Remove passkey Laptop' })).toBeNull())
      expect((await getUser(client, { userId: session.userId })).user.authenticators).toHaveLength(0)
    } finally {
      authenticator.uninstall()
    }
  })
})
