// @vitest-environment happy-dom
// The default authorization window: a popup read back on the redirect URI, and the full-page
// redirect fallback when the popup is blocked. The dev identity provider is driven with fetch.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createClientFixture } from '../../test/fixtures.ts'
import { completeOAuthRedirect } from './completeOAuthRedirect.ts'
import { hasPendingOAuth } from './pendingOAuth.ts'
import { signInWithOAuth } from './signInWithOAuth.ts'

const redirectUri = 'http://localhost:5173/oauth/callback'

/** What a person does on the dev IdP's authorize page; returns the redirect URL. */
async function consent(fx: Awaited<ReturnType<typeof createClientFixture>>, url: string, email: string) {
  const form = new URLSearchParams(new URL(url).searchParams)
  form.set('email', email)
  form.set('name', 'Popup Person')
  form.set('action', 'continue')
  const reply = await fx.harness.service.fetch(url.split('?')[0] as string, {
    method: 'POST',
    body: form,
    redirect: 'manual',
  })
  return reply.headers.get('location') as string
}

afterEach(() => {
  vi.restoreAllMocks()
  sessionStorage.clear()
})

describe('OAuth authorization window', () => {
  it('opens a popup and reads the code once it is back on the redirect URI', async () => {
    const fx = await createClientFixture({ oauth: { redirectUri } })
    let callback: string | undefined
    const popup = {
      closed: false,
      close: vi.fn(),
      location: {
        get href() {
          if (!callback) throw new DOMException('cross-origin', 'SecurityError')
          return callback
        },
      },
    }
    const open = vi.spyOn(window, 'open').mockImplementation((url) => {
      consent(fx, String(url), 'popup@example.com').then((location) => {
        callback = location
      })
      return popup as unknown as Window
    })
    const { session, created } = await signInWithOAuth(fx.client, { provider: 'discord' })
    expect(open).toHaveBeenCalledOnce()
    expect(String(open.mock.calls[0]?.[0])).toMatch(/\/dev\/oidc\/discord\/authorize\?response_type=code&/)
    expect(popup.close).toHaveBeenCalled()
    expect({ created, method: session.method, label: session.label }).toEqual({
      created: true,
      method: 'oauth',
      label: 'popup@example.com',
    })
  })

  it('a popup closed by the person is USER_CANCELLED', async () => {
    const fx = await createClientFixture({ oauth: { redirectUri } })
    vi.spyOn(window, 'open').mockReturnValue({ closed: true, close() {} } as unknown as Window)
    await expect(signInWithOAuth(fx.client, { provider: 'google' })).rejects.toMatchObject({
      code: 'USER_CANCELLED',
    })
  })

  it('falls back to a full-page redirect when the popup is blocked, and finishes on return', async () => {
    const fx = await createClientFixture({ oauth: { redirectUri } })
    vi.spyOn(window, 'open').mockReturnValue(null)
    const assign = vi.spyOn(window.location, 'assign').mockImplementation(() => undefined)
    void signInWithOAuth(fx.client, { provider: 'google' })
    await vi.waitFor(() => expect(assign).toHaveBeenCalledOnce())
    expect(hasPendingOAuth(fx.client)).toBe(true)
    const callbackUrl = await consent(fx, String(assign.mock.calls[0]?.[0]), 'redirect@example.com')
    // The page reloads on the redirect URI: a new client on the same storage finishes the sign-in.
    const page = fx.reload()
    const result = await completeOAuthRedirect(page, { callbackUrl })
    expect(result?.session).toMatchObject({
      method: 'oauth',
      label: 'redirect@example.com',
      status: 'active',
    })
    expect(hasPendingOAuth(page)).toBe(false)
    // Single use: replaying the same redirect does nothing.
    expect(await completeOAuthRedirect(page, { callbackUrl })).toBeUndefined()
  })

  it('with onPopupBlocked: error, a blocked popup is POPUP_BLOCKED', async () => {
    const fx = await createClientFixture({ oauth: { redirectUri } })
    vi.spyOn(window, 'open').mockReturnValue(null)
    await expect(
      signInWithOAuth(fx.client, { provider: 'google', onPopupBlocked: 'error' }),
    ).rejects.toMatchObject({
      code: 'POPUP_BLOCKED',
    })
  })
})
