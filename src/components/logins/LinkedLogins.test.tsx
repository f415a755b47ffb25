import type { Service } from '@latchkey/service'
import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createMfaPolicy } from '../../core/actions/activities/createMfaPolicy.ts'
import { signInWithOAuth } from '../../core/actions/auth/signInWithOAuth.ts'
import { getLinkedLogins } from '../../core/actions/queries/getLinkedLogins.ts'
import { UserCancelledError } from '../../core/errors.ts'
import { switchSession } from '../../core/session/sessions.ts'
import type { OpenAuthorizationWindow } from '../../core/types.ts'
import {
  installSoftAuthenticator,
  latestCode,
  type SoftAuthenticator,
  signedInClient,
} from '../test/renderWithService.tsx'
import { LinkedLogins } from './LinkedLogins.tsx'

const rows = () => screen.getAllByRole('listitem').map((item) => item.getAttribute('data-lk-login'))

/**
 * The provider's window, played by the dev identity provider: what `choice` does on its authorize
 * page (continue as a person, or cancel), or the person closing the window. `service` is read when
 * the window opens (the test's service is created with the client).
 */
type Choice = { email: string } | 'cancel at the provider' | 'close the window'
function devIdpWindow(service: () => Service, choices: Choice[]): OpenAuthorizationWindow {
  return async ({ url }) => {
    const choice = choices.shift()
    if (!choice) throw new Error('the provider window opened more often than the test expects')
    if (choice === 'close the window') throw new UserCancelledError('The sign-in window was closed')
    const page = await service().fetch(url)
    expect(page.status).toBe(200)
    const form = new URLSearchParams(new URL(url).searchParams)
    if (choice === 'cancel at the provider') form.set('action', 'cancel')
    else {
      form.set('email', choice.email)
      form.set('name', 'Test Person')
      form.set('action', 'continue')
    }
    const reply = await service().fetch(url.split('?')[0] as string, {
      method: 'POST',
      body: form,
      redirect: 'manual',
    })
    return reply.headers.get('location') as string
  }
}

/** A client signed in by e-mail whose OAuth windows are `choices`, in turn. */
async function signedInWithOAuthWindow(email: string, choices: Choice[]) {
  let service: Service | undefined
  const signedIn = await signedInClient({}, email, {
    oauth: {
      redirectUri: 'http://localhost:5173/oauth/callback',
      openAuthorizationWindow: devIdpWindow(() => service as Service, choices),
    },
  })
  service = signedIn.service
  return signedIn
}

describe('<LinkedLogins/>', () => {
  let authenticator: SoftAuthenticator | undefined
  afterEach(() => {
    authenticator?.uninstall()
    authenticator = undefined
    vi.restoreAllMocks()
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

  it('links Google through its window: it shows with Unlink, signing in with Google reaches this account, and it unlinks', async () => {
    const user = userEvent.setup()
    const google = { email: `omar+${crypto.randomUUID().slice(0, 8)}@example.com` }
    const choices: Choice[] = [google]
    const { client, session, render } = await signedInWithOAuthWindow('omar@example.com', choices)
    render(<LinkedLogins />)
    await screen.findByText('omar@example.com')
    const link = await screen.findByRole('button', { name: 'Link Google' })
    // Every provider wallet_kit_config enables is offered.
    for (const name of ['Link Apple', 'Link X', 'Link Discord', 'Link Facebook'])
      expect(screen.getByRole('button', { name })).toBeTruthy()

    link.focus()
    await user.keyboard('{Enter}')
    const done = await screen.findByText('Google is linked.', {}, { timeout: 10_000 })
    await waitFor(() => expect(document.activeElement).toBe(done))
    await waitFor(() => expect(rows()).toEqual(['email', 'oauth']))
    // Linked: no second "Link Google"; the identity has its own Unlink.
    expect(screen.queryByRole('button', { name: 'Link Google' })).toBeNull()
    expect(screen.getByRole('button', { name: 'Unlink Google' })).toBeTruthy()
    const { logins } = await getLinkedLogins(client)
    expect(logins.map((login) => [login.kind, login.label])).toEqual([
      ['email', 'omar@example.com'],
      ['oauth', 'OAUTH2_PROVIDER_GOOGLE'],
    ])

    // Signing in with that Google account reaches this same account.
    choices.push(google)
    const viaGoogle = await signInWithOAuth(client, { provider: 'google' })
    expect(viaGoogle.created).toBe(false)
    expect(viaGoogle.session.organizationId).toBe(session.organizationId)
    expect(viaGoogle.session.userId).toBe(session.userId)

    // Signed in with Google now (the same user): Google can go, the e-mail stays.
    await user.click(await screen.findByRole('button', { name: 'Unlink Google' }))
    await user.click(await screen.findByRole('button', { name: 'Yes, unlink' }))
    expect(await screen.findByText('Google is unlinked.')).toBeTruthy()
    await waitFor(() => expect(rows()).toEqual(['email']))
    expect(await screen.findByRole('button', { name: 'Link Google' })).toBeTruthy()
  })

  it('refuses, in words, a Google account another account holds; nothing is linked', async () => {
    const user = userEvent.setup()
    const google = { email: `zeynep+${crypto.randomUUID().slice(0, 8)}@example.com` }
    const choices: Choice[] = []
    const { client, session, render } = await signedInWithOAuthWindow('zeynep@example.com', choices)
    // Someone else signed up with that Google account first.
    choices.push(google)
    const other = await signInWithOAuth(client, { provider: 'google' })
    expect(other.created).toBe(true)
    switchSession(client, { sessionId: session.id })

    render(<LinkedLogins />)
    await screen.findByText('zeynep@example.com')
    choices.push(google)
    await user.click(await screen.findByRole('button', { name: 'Link Google' }))
    const refusal = await screen.findByText(
      'This Google account is already linked to another account. Sign in with it to use that one.',
      {},
      { timeout: 10_000 },
    )
    expect(refusal).toBeTruthy()
    expect(document.activeElement?.contains(refusal)).toBe(true)
    expect((await getLinkedLogins(client)).logins.map((login) => login.kind)).toEqual(['email'])
    expect(rows()).toEqual(['email'])
    expect(choices).toEqual([])
  })

  it('a closed window or a cancel at the provider changes nothing and gives focus back; with an MFA policy the step-up shows, then it links once', async () => {
    const user = userEvent.setup()
    const google = { email: `ines+${crypto.randomUUID().slice(0, 8)}@example.com` }
    const choices: Choice[] = ['close the window', 'cancel at the provider']
    const { client, render, service } = await signedInWithOAuthWindow('ines@example.com', choices)
    render(<LinkedLogins />)
    await screen.findByText('ines@example.com')
    const link = await screen.findByRole('button', { name: 'Link Google' })
    for (let attempt = 0; attempt < 2; attempt++) {
      link.focus()
      await user.keyboard('{Enter}')
      await waitFor(() => expect(choices).toHaveLength(1 - attempt))
      await waitFor(() => expect(document.activeElement).toBe(link))
      expect(link.hasAttribute('disabled')).toBe(false)
      expect(screen.queryByRole('alert')).toBeNull()
      expect(rows()).toEqual(['email'])
    }
    expect((await getLinkedLogins(client)).logins.map((login) => login.kind)).toEqual(['email'])

    await createMfaPolicy(client, {
      mfaPolicyName: 'an e-mailed code for account changes',
      condition: "activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2'",
      requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_EMAIL_OTP' }] }],
      order: 0,
    })
    choices.push(google)
    await user.click(link)
    const send = await screen.findByRole('button', { name: 'Email me a code' }, { timeout: 10_000 })
    await waitFor(() => expect(document.activeElement).toBe(send))
    // Held, not done.
    expect((await getLinkedLogins(client)).logins.map((login) => login.kind)).toEqual(['email'])
    await user.keyboard('{Enter}')
    const field = await screen.findByRole('textbox', { name: 'Code from the message' })
    await user.type(field, `${await latestCode(service, 'ines@example.com')}{Enter}`)
    expect(await screen.findByText('Google is linked.', {}, { timeout: 10_000 })).toBeTruthy()
    await waitFor(() => expect(rows()).toEqual(['email', 'oauth']))
    expect((await getLinkedLogins(client)).logins.map((login) => login.kind)).toEqual(['email', 'oauth'])
  })

  it('a blocked popup is offered again from a click, which opens the window at once and links; pop-ups off for the site say how to allow them', async () => {
    const user = userEvent.setup()
    const google = { email: `noor+${crypto.randomUUID().slice(0, 8)}@example.com` }
    // The default window (no openAuthorizationWindow): the browser's popup, played by window.open.
    const { client, render, service } = await signedInClient({}, 'noor@example.com', {
      oauth: { redirectUri: 'http://localhost:5173/oauth/callback' },
    })
    const provider = devIdpWindow(() => service, [google])
    let callback: string | undefined
    const popup = {
      closed: false,
      close: vi.fn(() => {
        popup.closed = true
      }),
      location: {
        get href() {
          if (!callback) throw new DOMException('cross-origin', 'SecurityError')
          return callback
        },
        set href(url: string) {
          void provider({ url, redirectUri: 'http://localhost:5173/oauth/callback' }).then((location) => {
            callback = location
          })
        },
      },
    }
    // The first window, opened once the request is built, is blocked; the one opened in the click
    // (blank, then sent to the provider) is not; the last click finds pop-ups off altogether.
    const open = vi
      .spyOn(window, 'open')
      .mockReturnValue(null)
      .mockReturnValueOnce(null)
      .mockReturnValueOnce(popup as unknown as Window)
    render(<LinkedLogins />)
    await screen.findByText('noor@example.com')
    await user.click(await screen.findByRole('button', { name: 'Link Google' }))
    const again = await screen.findByRole('button', { name: 'Open the Google window' }, { timeout: 10_000 })
    expect(
      screen.getByText('Your browser blocked the Google window. Open it from here instead.'),
    ).toBeTruthy()
    await waitFor(() => expect(document.activeElement).toBe(again))
    expect(String(open.mock.calls[0]?.[0])).toMatch(/\/dev\/oidc\/google\/authorize\?/)
    expect(rows()).toEqual(['email'])

    await user.keyboard('{Enter}')
    // The window opened in the click itself, blank, before the new request was built.
    expect(open.mock.calls[1]?.[0]).toBe('about:blank')
    const done = await screen.findByText('Google is linked.', {}, { timeout: 10_000 })
    await waitFor(() => expect(document.activeElement).toBe(done))
    await waitFor(() => expect(rows()).toEqual(['email', 'oauth']))
    expect(popup.close).toHaveBeenCalled()
    expect(screen.queryByRole('button', { name: 'Open the Google window' })).toBeNull()
    expect((await getLinkedLogins(client)).logins.map((login) => login.kind)).toEqual(['email', 'oauth'])

    // Apple: blocked, and blocked again from the click: the advice to allow pop-ups, nothing linked.
    await user.click(screen.getByRole('button', { name: 'Link Apple' }))
    const apple = await screen.findByRole('button', { name: 'Open the Apple window' }, { timeout: 10_000 })
    await user.click(apple)
    const advice = await screen.findByText('The Apple window was blocked. Allow pop-ups, then try again.')
    expect(document.activeElement?.contains(advice)).toBe(true)
    expect(screen.queryByRole('button', { name: 'Open the Apple window' })).toBeNull()
    expect(rows()).toEqual(['email', 'oauth'])
  })
})
