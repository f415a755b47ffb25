import type { CreateServiceOptions } from '@latchkey/service'
import { act, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { installCaptchaDouble } from '../test/installCaptchaDouble.ts'
import { renderWithService } from '../test/renderWithService.tsx'
import { AuthModal } from './AuthModal.tsx'
import type { CaptchaProvider } from './mountCaptcha.ts'

// Counts the loads of the widget's module (the dynamic import in CaptchaField): an app without a
// CAPTCHA must never fetch it. The count is per test file, so the test that expects none runs first.
const widgetModule = vi.hoisted(() => ({ loads: 0 }))
vi.mock('./mountCaptcha.ts', async (importOriginal) => {
  widgetModule.loads++
  return importOriginal()
})

const VERIFY_URL = 'http://127.0.0.1:9/siteverify'

/**
 * The service with a CAPTCHA, its siteverify answered in-process (every token passes) and
 * recorded: what it was asked to verify is exactly what the kit sent as `X-Captcha-Token`.
 */
function captchaService(provider: CaptchaProvider) {
  const verified: string[] = []
  const options: CreateServiceOptions = {
    captcha: { provider, siteKey: `${provider}-site-key`, secret: 'captcha-secret', verifyUrl: VERIFY_URL },
    fetch: async (input, init) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
      if (url !== VERIFY_URL) return fetch(input, init)
      verified.push(new URLSearchParams(String(init?.body)).get('response') ?? '')
      return new Response(JSON.stringify({ success: true }), {
        headers: { 'Content-Type': 'application/json' },
      })
    },
  }
  return { options, verified }
}

// The scripts' addresses, written out (importing them would load the module under test).
const SCRIPT_PREFIXES = ['https://challenges.cloudflare.com/turnstile/', 'https://js.hcaptcha.com/']
const providerScripts = () =>
  [...document.querySelectorAll('script')]
    .map((s) => s.src)
    .filter((src) => SCRIPT_PREFIXES.some((prefix) => src.startsWith(prefix)))

afterEach(() => {
  delete window.turnstile
  delete window.hcaptcha
  vi.useRealTimers()
  vi.restoreAllMocks()
})

async function openAndType(user: ReturnType<typeof userEvent.setup>, email: string) {
  await user.click(screen.getByRole('button', { name: 'Sign in' }))
  await user.type(await screen.findByRole('textbox', { name: 'Email address' }), email)
}

describe('<AuthModal/> with a CAPTCHA', () => {
  it('without one in the proxy configuration, loads nothing of it: no widget module, no script', async () => {
    const user = userEvent.setup()
    await renderWithService(<AuthModal />)
    await openAndType(user, 'plain@example.com')
    expect(screen.queryByRole('group', { name: 'Security check' })).toBeNull()
    await user.click(screen.getByRole('button', { name: 'Continue' }))
    await screen.findByRole('heading', { name: 'Enter the code' })
    expect(widgetModule.loads).toBe(0)
    expect(providerScripts()).toEqual([])
  })

  it('waits for the check, sends its token with the code, and asks for a new one to resend', async () => {
    const user = userEvent.setup()
    const { widgets } = installCaptchaDouble('turnstile')
    const { options, verified } = captchaService('turnstile')
    await renderWithService(<AuthModal />, options)
    await openAndType(user, 'human@example.com')
    const check = await screen.findByRole('group', { name: 'Security check' })
    await waitFor(() => expect(widgets).toHaveLength(1))
    expect(widgets[0]!.parameters).toMatchObject({
      sitekey: 'turnstile-site-key',
      theme: 'light',
      size: 'flexible',
    })
    // The page already had the provider's global: no script is added, but the module is loaded.
    expect(providerScripts()).toEqual([])
    expect(widgetModule.loads).toBe(1)

    // Unsolved, the send button says why it waits; pressing it (Enter in the field) goes to the check.
    const waiting = screen.getByRole('button', { name: 'Complete the security check first' })
    expect(waiting.getAttribute('aria-disabled')).toBe('true')
    await user.keyboard('{Enter}')
    expect(document.activeElement).toBe(check)
    expect(verified).toEqual([])

    await user.click(within(check).getByRole('button', { name: 'I am human' }))
    // The resend cooldown runs on timers this test moves on (still flowing in real time meanwhile).
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'], shouldAdvanceTime: true })
    await user.click(screen.getByRole('button', { name: 'Continue' }))
    await screen.findByRole('heading', { name: 'Enter the code' })
    expect(verified).toEqual(['token-1'])
    // The sent token is spent: that widget was reset, then went away with its step (an effect's
    // cleanup, which React 18 runs after the new step is on the page).
    await waitFor(() => expect(widgets[0]).toMatchObject({ resets: 1, removed: true }))

    // Once resending is possible, a new check is needed for it.
    for (let s = 0; s < 40 && screen.queryByText(/Resend code in/); s++)
      await act(() => vi.advanceTimersByTimeAsync(1000))
    vi.useRealTimers()
    const resendCheck = await screen.findByRole('group', { name: 'Security check' })
    await waitFor(() => expect(widgets).toHaveLength(2))
    const resend = screen.getByRole('button', { name: 'Complete the security check first' })
    await user.click(resend)
    expect(document.activeElement).toBe(resendCheck)
    expect(verified).toEqual(['token-1'])
    await user.click(within(resendCheck).getByRole('button', { name: 'I am human' }))
    await user.click(screen.getByRole('button', { name: 'Resend code' }))
    await screen.findByText('We sent a new code.')
    expect(verified).toEqual(['token-1', 'token-2'])
    // The cooldown starts again, and the widget goes until resending is possible again.
    await waitFor(() => expect(screen.queryByRole('group', { name: 'Security check' })).toBeNull())
    await waitFor(() => expect(widgets[1]!.removed).toBe(true))
  })

  it('gives a narrow field (a 320 px screen) the compact widget, so nothing overflows', async () => {
    // The modal's content at 320 px: 296 px of dialog less 2 × 16 px of padding.
    vi.spyOn(HTMLElement.prototype, 'clientWidth', 'get').mockReturnValue(264)
    const user = userEvent.setup()
    const { widgets } = installCaptchaDouble('turnstile')
    await renderWithService(<AuthModal />, captchaService('turnstile').options)
    await openAndType(user, 'narrow@example.com')
    await waitFor(() => expect(widgets).toHaveLength(1))
    expect(widgets[0]!.parameters.size).toBe('compact')
  })

  it('explains a widget error and "Try again" renders a new widget', async () => {
    const user = userEvent.setup()
    const { widgets } = installCaptchaDouble('turnstile', { failFirst: true })
    const { options, verified } = captchaService('turnstile')
    await renderWithService(<AuthModal />, options)
    await openAndType(user, 'retry@example.com')
    const alert = await screen.findByRole('alert')
    expect(alert.textContent).toContain(
      'The security check couldn’t load. Check your connection, then try again.',
    )
    await user.click(within(alert).getByRole('button', { name: 'Try again' }))
    const check = screen.getByRole('group', { name: 'Security check' })
    expect(document.activeElement).toBe(check)
    await waitFor(() => expect(widgets).toHaveLength(2))
    await waitFor(() => expect(widgets[0]!.removed).toBe(true))
    expect(screen.queryByRole('alert')).toBeNull()
    await user.click(within(check).getByRole('button', { name: 'I am human' }))
    await user.click(screen.getByRole('button', { name: 'Continue' }))
    await screen.findByRole('heading', { name: 'Enter the code' })
    expect(verified).toEqual(['token-1'])
  })

  it('injects the provider’s script once when the page lacks it, and retries after it fails to load', async () => {
    // The test page loads no external script: the injected one fails as it would offline.
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const added: string[] = []
    const observer = new MutationObserver((records) => {
      for (const record of records)
        for (const node of record.addedNodes) if (node instanceof HTMLScriptElement) added.push(node.src)
    })
    observer.observe(document.head, { childList: true })
    const user = userEvent.setup()
    const { options, verified } = captchaService('hcaptcha')
    await renderWithService(<AuthModal theme="dark" />, options)
    await openAndType(user, 'offline@example.com')
    const alert = await screen.findByRole('alert')
    expect(alert.textContent).toContain('The security check couldn’t load.')
    expect(added).toEqual(['https://js.hcaptcha.com/1/api.js?render=explicit'])
    // A failed script does not stay in the page.
    expect(providerScripts()).toEqual([])

    // The provider became reachable: "Try again" renders the widget, in the kit's theme.
    const { widgets } = installCaptchaDouble('hcaptcha')
    await user.click(within(alert).getByRole('button', { name: 'Try again' }))
    await waitFor(() => expect(widgets).toHaveLength(1))
    observer.disconnect()
    expect(added).toHaveLength(1)
    expect(widgets[0]!.parameters).toMatchObject({
      sitekey: 'hcaptcha-site-key',
      theme: 'dark',
      size: 'normal',
    })
    await user.click(screen.getByRole('button', { name: 'I am human' }))
    await user.click(screen.getByRole('button', { name: 'Continue' }))
    await screen.findByRole('heading', { name: 'Enter the code' })
    expect(verified).toEqual(['token-1'])
  })
})
