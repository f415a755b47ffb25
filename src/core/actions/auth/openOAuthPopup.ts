import { AbortedError, PopupBlockedError, UserCancelledError } from '../../errors.ts'
import type { OpenAuthorizationWindow } from '../../types.ts'

/** A centred popup of the provider's size showing `url`; `PopupBlockedError` when the browser refuses it. */
function openPopupWindow(url: string): Window {
  const width = 500
  const height = 640
  const left = Math.max(0, (window.screenX ?? 0) + (window.outerWidth - width) / 2)
  const top = Math.max(0, (window.screenY ?? 0) + (window.outerHeight - height) / 2)
  const popup = window.open(
    url,
    'latchkey-oauth',
    `popup,width=${width},height=${height},left=${left},top=${top}`,
  )
  if (!popup) throw new PopupBlockedError()
  return popup
}

/**
 * Resolves with the popup's URL once it is back on the redirect URI (same origin, so readable);
 * `UserCancelledError` when it is closed first, `AbortedError` (and closed) on `signal`.
 */
function readBack(popup: Window, redirectUri: string, signal: AbortSignal | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const expected = new URL(redirectUri)
    const finish = (run: () => void) => {
      clearInterval(timer)
      signal?.removeEventListener('abort', onAbort)
      run()
    }
    const onAbort = () =>
      finish(() => {
        popup.close()
        reject(new AbortedError(signal?.reason))
      })
    signal?.addEventListener('abort', onAbort, { once: true })
    const timer = setInterval(() => {
      if (popup.closed) return finish(() => reject(new UserCancelledError('The sign-in window was closed')))
      let href: string
      try {
        href = popup.location.href
      } catch {
        return // still on the provider's origin
      }
      const at = new URL(href)
      if (at.origin === expected.origin && at.pathname === expected.pathname && at.search)
        finish(() => {
          popup.close()
          resolve(href)
        })
    }, 200)
  })
}

/**
 * Opens the authorization URL in a centred popup and resolves with the redirect URL once the
 * popup is back on the redirect URI (same origin, so readable). Throws `PopupBlockedError`
 * when the browser refuses the popup, `UserCancelledError` when it is closed first.
 */
export const openOAuthPopup: OpenAuthorizationWindow = async ({ url, redirectUri, signal }) =>
  readBack(openPopupWindow(url), redirectUri, signal)

/** An authorization window opened ahead of its URL; `close()` closes it if it was never used. */
export type ReservedOAuthPopup = OpenAuthorizationWindow & { close(): void }

/**
 * Opens the authorization popup now, blank, for an authorization request built afterwards: call it
 * in a click handler, then pass it as `openAuthorizationWindow`. Browsers block a popup opened
 * after the click's work (loading the configuration, hashing the PKCE verifier) has taken too
 * long; one opened during the click is allowed. Throws `PopupBlockedError` when even that is
 * refused (pop-ups switched off for the site).
 */
export function reserveOAuthPopup(): ReservedOAuthPopup {
  const popup = openPopupWindow('about:blank')
  let used = false
  const open: OpenAuthorizationWindow = async ({ url, redirectUri, signal }) => {
    used = true
    if (popup.closed) throw new UserCancelledError('The sign-in window was closed')
    popup.location.href = url
    return readBack(popup, redirectUri, signal)
  }
  return Object.assign(open, {
    close: () => {
      if (!used && !popup.closed) popup.close()
    },
  })
}

/**
 * Where every OAuth flow (sign-in, linking a login) opens the provider: `open` when given (the
 * parameter's or the config's), else the default popup. A blocked default popup runs `whenBlocked`
 * when there is one (the sign-in's full-page redirect) and throws `PopupBlockedError` otherwise.
 */
export async function openAuthorization(request: {
  url: string
  redirectUri: string
  open?: OpenAuthorizationWindow | undefined
  signal?: AbortSignal | undefined
  whenBlocked?: (() => Promise<never>) | undefined
}): Promise<string> {
  const { url, redirectUri, open, signal, whenBlocked } = request
  if (open) return open({ url, redirectUri, signal })
  try {
    return await openOAuthPopup({ url, redirectUri, signal })
  } catch (error) {
    if (error instanceof PopupBlockedError && whenBlocked) return whenBlocked()
    throw error
  }
}
