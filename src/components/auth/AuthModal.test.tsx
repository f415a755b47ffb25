import { act, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { useState } from 'react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Session } from '../../react/index.ts'
import { preloadMessages } from '../i18n/messages.ts'
import {
  installSoftAuthenticator,
  latestCode,
  renderWithService,
  type SoftAuthenticator,
  signedInClient,
} from '../test/renderWithService.tsx'
import { AuthModal, AuthModalCancelledError, useAuthModal } from './AuthModal.tsx'

function OpenButton({ label, onOpen }: { label: string; onOpen: (session: Promise<Session>) => void }) {
  const modal = useAuthModal()
  return (
    <button type="button" onClick={() => onOpen(modal.open())}>
      {label}
    </button>
  )
}

function ControlledModal({ changes }: { changes: boolean[] }) {
  const [open, setOpen] = useState(true)
  return (
    <AuthModal
      open={open}
      methods={['discord', 'google', 'email']}
      onOpenChange={(next) => {
        changes.push(next)
        setOpen(next)
      }}
    />
  )
}

const dialog = () => screen.getByRole('dialog')

async function openModal(user: Awaited<ReturnType<typeof userEvent.setup>>) {
  await user.click(screen.getByRole('button', { name: 'Sign in' }))
  return screen.findByRole('textbox', { name: 'Email address' })
}

describe('<AuthModal/>', () => {
  it('opens from its own trigger, offers the enabled methods in order, and Escape returns focus', async () => {
    const user = userEvent.setup()
    await renderWithService(<AuthModal />)
    const trigger = screen.getByRole('button', { name: 'Sign in' })
    const email = await openModal(user)
    // The body loads on demand; once it is there, focus is inside it on the first field.
    await waitFor(() => expect(document.activeElement).toBe(email))
    expect(dialog()).toHaveProperty('open', true)
    expect(dialog().getAttribute('aria-labelledby')).toBe(screen.getByRole('heading', { name: 'Sign in' }).id)
    const methods = within(screen.getByRole('navigation', { name: 'Sign-in methods' }))
      .getAllByRole('button')
      .map((b) => b.getAttribute('aria-label') ?? b.textContent)
    expect(methods).toEqual([
      'Continue with a passkey',
      'Continue with Google',
      'Continue with Apple',
      'Continue with X',
      'Continue with Discord',
      'Continue with Facebook',
      'Continue with a wallet',
    ])
    expect(screen.getByRole('button', { name: 'Use phone number instead' })).toBeTruthy()
    await user.keyboard('{Escape}')
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull())
    expect(document.activeElement).toBe(trigger)
  })

  it('signs a new user up by e-mail: wrong code explained, pasted code auto-submits, closes itself, open() resolves', async () => {
    const user = userEvent.setup()
    let opened: Promise<Session> | undefined
    const { service } = await renderWithService(
      <>
        <OpenButton label="Open from app" onOpen={(promise) => (opened = promise)} />
        <AuthModal trigger={false} />
      </>,
    )
    await user.click(screen.getByRole('button', { name: 'Open from app' }))
    await user.type(await screen.findByRole('textbox', { name: 'Email address' }), 'ana@example.com')
    await user.click(screen.getByRole('button', { name: 'Continue' }))
    expect(await screen.findByRole('heading', { name: 'Enter the code' })).toBeTruthy()
    expect(screen.getByText(/We sent a 6-digit code to/).textContent).toContain('ana@example.com')
    const code = await latestCode(service, 'ana@example.com')
    const wrong = code === '000000' ? '111111' : '000000'
    await user.click(screen.getByRole('textbox', { name: 'Digit 1 of 6' }))
    await user.paste(wrong)
    expect((await screen.findByRole('alert')).textContent).toBe(
      'That code isn’t right. Check it and try again.',
    )
    expect(screen.getAllByRole('textbox').map((i) => (i as HTMLInputElement).value)).toEqual(
      Array(6).fill(''),
    )
    await user.click(screen.getByRole('textbox', { name: 'Digit 1 of 6' }))
    await user.paste(code)
    // Signed in: no "ready" step to dismiss, the modal closes by itself.
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull(), { timeout: 10_000 })
    expect(screen.queryByRole('heading', { name: 'Your account is ready' })).toBeNull()
    const session = await opened!
    expect(session).toMatchObject({ status: 'active', method: 'otp', label: 'ana@example.com' })
  })

  it('types the code one digit at a time and moves focus along', async () => {
    const user = userEvent.setup()
    const { service } = await renderWithService(<AuthModal />)
    await user.type(await openModal(user), 'typed@example.com{Enter}')
    await screen.findByRole('heading', { name: 'Enter the code' })
    const code = await latestCode(service, 'typed@example.com')
    await user.keyboard(code.slice(0, 3))
    expect(document.activeElement).toBe(screen.getByRole('textbox', { name: 'Digit 4 of 6' }))
    await user.keyboard(code.slice(3))
    // Signed in, the modal closes and the trigger no longer offers the sign-in form: it shows
    // the account and logs out.
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull(), { timeout: 10_000 })
    expect(screen.queryByRole('button', { name: 'Sign in' })).toBeNull()
    expect(screen.getByText('typed@example.com')).toBeTruthy()
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Sign out' }))
  })

  it('showSuccess ends with the ready step, worded for a modal, and Done closes it', async () => {
    const user = userEvent.setup()
    let opened: Promise<Session> | undefined
    const { service } = await renderWithService(
      <>
        <OpenButton label="Open from app" onOpen={(promise) => (opened = promise)} />
        <AuthModal trigger={false} showSuccess />
      </>,
    )
    await user.click(screen.getByRole('button', { name: 'Open from app' }))
    await user.type(await screen.findByRole('textbox', { name: 'Email address' }), 'eva@example.com{Enter}')
    await screen.findByRole('heading', { name: 'Enter the code' })
    await user.keyboard(await latestCode(service, 'eva@example.com'))
    const heading = await screen.findByRole('heading', { name: 'Your account is ready' }, { timeout: 10_000 })
    expect(heading.nextElementSibling?.textContent).toBe('You’re all set to continue.')
    expect(dialog().textContent).not.toMatch(/close this window/i)
    // The session exists before the person dismisses the step.
    expect(await opened!).toMatchObject({ status: 'active', label: 'eva@example.com' })
    await user.click(screen.getByRole('button', { name: 'Done' }))
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull())
  })

  describe('with passkeys available in the browser', () => {
    let authenticator: SoftAuthenticator | undefined
    afterEach(() => {
      authenticator?.uninstall()
      authenticator = undefined
      vi.restoreAllMocks()
    })

    it('offers a new account a passkey, then closes itself when the person says "Not now"', async () => {
      authenticator = installSoftAuthenticator()
      const user = userEvent.setup()
      const { service } = await renderWithService(<AuthModal />)
      await user.type(await openModal(user), 'olga@example.com{Enter}')
      await screen.findByRole('heading', { name: 'Enter the code' })
      await user.keyboard(await latestCode(service, 'olga@example.com'))
      expect(
        await screen.findByRole('heading', { name: 'Sign in faster next time' }, { timeout: 10_000 }),
      ).toBeTruthy()
      // Focus follows the step (not left on <body> behind the dialog): on "Not now", which also
      // reads the offer to a screen reader, so a keyboard answers without searching for it.
      const notNow = screen.getByRole('button', { name: 'Not now' })
      await waitFor(() => expect(document.activeElement).toBe(notNow))
      expect(notNow.getAttribute('aria-describedby')).toBeTruthy()
      expect(document.getElementById(notNow.getAttribute('aria-describedby')!)?.textContent).toBe(
        'Add a passkey to this account so you can skip the code.',
      )
      await user.keyboard('{Enter}')
      await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull())
      expect(screen.getByRole('button', { name: 'Sign out' })).toBeTruthy()
    })

    it('a first visit with no passkey for the site says so and offers a passkey account, named after the device', async () => {
      authenticator = installSoftAuthenticator()
      vi.spyOn(navigator, 'userAgent', 'get').mockReturnValue(
        'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
      )
      const user = userEvent.setup()
      await renderWithService(<AuthModal />)
      await openModal(user)
      // This browser holds no passkey for the site: it answers NotAllowedError, as for a dismissed prompt.
      await user.click(screen.getByRole('button', { name: 'Continue with a passkey' }))
      const alert = await screen.findByRole('alert')
      expect(alert.textContent).toBe(
        'No passkey was used. New here, or no passkey for this site on this device? Create an account with a passkey.',
      )
      expect(screen.queryByText(/prompt was dismissed/)).toBeNull()
      // Creating the account is the first (primary) action, trying again the second.
      const create = screen.getByRole('button', { name: 'Create an account with a passkey' })
      const retry = screen.getByRole('button', { name: 'Try again' })
      expect(create.getAttribute('data-variant')).toBe('primary')
      expect(retry.getAttribute('data-variant')).toBe('secondary')
      expect(create.compareDocumentPosition(retry) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy()
      await user.click(create)
      // Not "Passkey user 2026-11-28": the account says where its passkey was made.
      expect(
        await screen.findByText('Passkey user (Chrome on macOS)', undefined, { timeout: 10_000 }),
      ).toBeTruthy()
      expect(authenticator.credentials).toHaveLength(1)
    })

    it('offerPasskey={false} skips the offer: the modal closes as soon as the account exists', async () => {
      authenticator = installSoftAuthenticator()
      const user = userEvent.setup()
      const seen: string[] = []
      const { service } = await renderWithService(
        <AuthModal offerPasskey={false} onSuccess={({ isNewUser }) => seen.push(`new: ${isNewUser}`)} />,
      )
      await user.type(await openModal(user), 'pia@example.com{Enter}')
      await screen.findByRole('heading', { name: 'Enter the code' })
      await user.keyboard(await latestCode(service, 'pia@example.com'))
      await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull(), { timeout: 10_000 })
      expect(seen).toEqual(['new: true'])
      expect(screen.queryByRole('heading', { name: 'Sign in faster next time' })).toBeNull()
      expect(authenticator.credentials).toEqual([])
      expect(screen.getByRole('button', { name: 'Sign out' })).toBeTruthy()
    })
  })

  describe('once the session has expired', () => {
    afterEach(() => {
      vi.useRealTimers()
    })

    it('the trigger and the first step say "Session expired — sign in again"; signing in again restores it', async () => {
      // Fake time that still flows, so the service round trips and Testing Library's waits run;
      // the expiry is reached by advancing it, at the instant the session timer fires.
      vi.useFakeTimers({
        shouldAdvanceTime: true,
        toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'],
      })
      const user = userEvent.setup({ advanceTimers: (ms) => vi.advanceTimersByTime(ms) })
      const { render, service, session } = await signedInClient({}, 'ivo@example.com', {
        session: { autoRefresh: false, expirationSeconds: 5 },
      })
      render(<AuthModal />)
      expect((await screen.findByText('ivo@example.com')).textContent).toBe('Signed in: ivo@example.com')
      await act(() => vi.advanceTimersByTimeAsync(session.expiresAt - Date.now()))

      expect(screen.queryByText('ivo@example.com')).toBeNull()
      expect(screen.queryByRole('button', { name: 'Sign out' })).toBeNull()
      await user.click(screen.getByRole('button', { name: 'Session expired — sign in again' }))
      const email = await screen.findByRole('textbox', { name: 'Email address' })
      expect(
        within(dialog()).getByText('Session expired — sign in again').closest('[role="status"]'),
      ).toBeTruthy()

      await user.type(email, 'ivo@example.com{Enter}')
      await screen.findByRole('heading', { name: 'Enter the code' })
      await user.keyboard(await latestCode(service, 'ivo@example.com'))
      await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull(), { timeout: 10_000 })
      expect(screen.getByText('ivo@example.com')).toBeTruthy()
      expect(screen.getByRole('button', { name: 'Sign out' })).toBeTruthy()
      expect(screen.queryByText('Session expired — sign in again')).toBeNull()
    })
  })

  it('shows the signed-in account instead of the sign-in trigger, and logs out from it', async () => {
    const user = userEvent.setup()
    const { render } = await signedInClient({}, 'ines@example.com')
    render(<AuthModal />)
    const account = await screen.findByText('ines@example.com')
    expect(account.textContent).toBe('Signed in: ines@example.com')
    expect(screen.queryByRole('button', { name: 'Sign in' })).toBeNull()
    await user.click(screen.getByRole('button', { name: 'Sign out' }))
    expect(await screen.findByRole('button', { name: 'Sign in' })).toBeTruthy()
    expect(screen.queryByText('ines@example.com')).toBeNull()
    expect(screen.queryByRole('dialog')).toBeNull()
  })

  it('rejects useAuthModal().open() with a typed cancellation when closed', async () => {
    const user = userEvent.setup()
    let result: unknown
    await renderWithService(
      <>
        <OpenButton label="Open" onOpen={(promise) => promise.catch((error) => (result = error))} />
        <AuthModal trigger={false} />
      </>,
    )
    await user.click(screen.getByRole('button', { name: 'Open' }))
    await screen.findByRole('textbox', { name: 'Email address' })
    await user.click(screen.getByRole('button', { name: 'Close' }))
    await waitFor(() => expect(result).toBeInstanceOf(AuthModalCancelledError))
    expect(result).toMatchObject({ code: 'USER_CANCELLED' })
  })

  it('is controlled with open/onOpenChange and keeps only the methods asked for, in that order', async () => {
    const user = userEvent.setup()
    const changes: boolean[] = []
    await renderWithService(<ControlledModal changes={changes} />)
    await screen.findByRole('textbox', { name: 'Email address' })
    expect(screen.queryByRole('button', { name: 'Sign in' })).toBeNull()
    const nav = within(screen.getByRole('navigation', { name: 'Sign-in methods' }))
    expect(nav.getAllByRole('button').map((b) => b.textContent)).toEqual([
      'Continue with Discord',
      'Continue with Google',
    ])
    expect(screen.queryByRole('button', { name: 'Use phone number instead' })).toBeNull()
    await user.keyboard('{Escape}')
    await waitFor(() => expect(changes).toEqual([false]))
  })

  it('explains when no method is enabled and when the proxy is switched off', async () => {
    const user = userEvent.setup()
    const first = await renderWithService(<AuthModal />, { proxySettings: { enabledProviders: [] } })
    await user.click(screen.getByRole('button', { name: 'Sign in' }))
    expect(await screen.findByText('This app hasn’t turned on any way to sign in yet.')).toBeTruthy()
    first.unmount()
    await renderWithService(<AuthModal />, { proxySettings: { enabled: false } })
    await user.click(screen.getByRole('button', { name: 'Sign in' }))
    expect(await screen.findByText('Sign-in is switched off for this app. Try again later.')).toBeTruthy()
  })

  it('validates the e-mail before sending and switches to the phone field', async () => {
    const user = userEvent.setup()
    await renderWithService(<AuthModal />)
    await user.type(await openModal(user), 'not-an-email{Enter}')
    expect(screen.getByRole('alert').textContent).toBe('Enter a valid email address.')
    expect(screen.getByRole('textbox', { name: 'Email address' }).getAttribute('aria-invalid')).toBe('true')
    await user.click(screen.getByRole('button', { name: 'Use phone number instead' }))
    expect(await screen.findByRole('combobox', { name: 'Country or region' })).toBeTruthy()
    expect(screen.getByRole('textbox', { name: 'Phone number' })).toBeTruthy()
  })

  it('sends an SMS code to the E.164 number built from country and national number', async () => {
    const user = userEvent.setup()
    const { service } = await renderWithService(<AuthModal methods={['sms']} />)
    await user.click(screen.getByRole('button', { name: 'Sign in' }))
    await user.selectOptions(await screen.findByRole('combobox', { name: 'Country or region' }), 'ES')
    await user.type(screen.getByRole('textbox', { name: 'Phone number' }), '612 345 678{Enter}')
    await screen.findByRole('heading', { name: 'Enter the code' })
    expect(screen.getByText(/We sent a 6-digit code to/).textContent).toContain('+34612345678')
    expect(await latestCode(service, '+34612345678')).toMatch(/^\d{6}$/)
    await user.click(screen.getByRole('button', { name: 'Back' }))
    expect(await screen.findByRole('combobox', { name: 'Country or region' })).toBeTruthy()
  })

  it('says so when the service does not text numbers of the chosen country, and sends nothing', async () => {
    const user = userEvent.setup()
    const { service } = await renderWithService(<AuthModal methods={['sms']} />, {
      smsBudget: { allowedCountries: ['US'] },
    })
    await user.click(screen.getByRole('button', { name: 'Sign in' }))
    await user.selectOptions(await screen.findByRole('combobox', { name: 'Country or region' }), 'ES')
    await user.type(screen.getByRole('textbox', { name: 'Phone number' }), '612 345 678{Enter}')
    expect(
      await screen.findByText(
        'Codes by text message can’t be sent to numbers in this country. Choose another way to sign in.',
      ),
    ).toBeTruthy()
    expect(screen.queryByRole('heading', { name: 'Enter the code' })).toBeNull()
    await expect(latestCode(service, '+34612345678')).rejects.toThrow()
  })

  it('speaks Arabic right to left and Spanish', async () => {
    const user = userEvent.setup()
    // Built-in dictionaries load on demand; preloading keeps the first render from suspending.
    await Promise.all([preloadMessages('ar'), preloadMessages('es')])
    const first = await renderWithService(<AuthModal locale="ar" />)
    await user.click(await screen.findByRole('button', { name: 'تسجيل الدخول' }, { timeout: 5000 }))
    await screen.findByRole('textbox', { name: 'البريد الإلكتروني' })
    expect(dialog().getAttribute('dir')).toBe('rtl')
    expect(dialog().getAttribute('lang')).toBe('ar')
    first.unmount()
    await renderWithService(<AuthModal locale="es" messages={{ signIn: 'Entrar' }} theme="dark" />)
    await user.click(await screen.findByRole('button', { name: 'Entrar' }, { timeout: 5000 }))
    await screen.findByRole('textbox', { name: 'Correo electrónico' })
    expect(dialog().getAttribute('data-lk-theme')).toBe('dark')
    await act(async () => {})
  })
})
