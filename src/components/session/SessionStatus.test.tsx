import { screen, waitFor } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it } from 'vitest'
import { getWallets } from '../../core/actions/queries/getWallets.ts'
import { signedInClient } from '../test/renderWithService.tsx'
import { SessionStatus } from './SessionStatus.tsx'

describe('<SessionStatus/>', () => {
  it('shows the active session with its countdown, refreshes it and signs out (the key is revoked)', async () => {
    const user = userEvent.setup()
    const { client, session, render } = await signedInClient()
    render(<SessionStatus />)
    expect(screen.getByText('Signed in')).toBeTruthy()
    expect(screen.getByText(/^Ends in 1[45]:\d\d$/)).toBeTruthy()
    expect(screen.getByText('ana@example.com')).toBeTruthy()

    await user.click(screen.getByRole('button', { name: 'Stay signed in' }))
    await waitFor(() =>
      expect(client.store.getState().sessions[session.id]?.publicKey).not.toBe(session.publicKey),
    )
    expect(screen.getByText('Signed in')).toBeTruthy()

    const signedInAs = client.store.getState().sessions[session.id]!
    await user.click(screen.getByRole('button', { name: 'Sign out' }))
    expect(await screen.findByText('Not signed in')).toBeTruthy()
    // The revoked key no longer opens the organization.
    await expect(
      getWallets(client, { organizationId: signedInAs.organizationId, sessionId: signedInAs.id }),
    ).rejects.toThrow()
  })

  it('leaves signing out to the page with showSignOut={false}', async () => {
    const { render } = await signedInClient()
    render(<SessionStatus showSignOut={false} />)
    expect(screen.getByText('Signed in')).toBeTruthy()
    expect(screen.getByRole('button', { name: 'Stay signed in' })).toBeTruthy()
    expect(screen.queryByRole('button', { name: /sign out|log out/i })).toBeNull()
  })

  it('offers sign-in when signed out, in Spanish', async () => {
    const user = userEvent.setup()
    const { client, render } = await signedInClient()
    await import('../i18n/messages.ts').then((m) => m.preloadMessages('es'))
    client.store.setState({ activeId: null, status: 'signed-out' })
    const asked: string[] = []
    render(<SessionStatus locale="es" onSignIn={() => asked.push('sign-in')} />)
    expect(await screen.findByText('Sin sesión iniciada')).toBeTruthy()
    await user.click(screen.getByRole('button', { name: 'Iniciar sesión' }))
    expect(asked).toEqual(['sign-in'])
  })
})
