import { AbortedError, PopupBlockedError, UserCancelledError } from '../../errors.ts'
import type { OpenAuthorizationWindow } from '../../types.ts'

/**
 * Opens the authorization URL in a centred popup and resolves with the redirect URL once the
 * popup is back on the redirect URI (same origin, so readable). Throws `PopupBlockedError`
 * when the browser refuses the popup, `UserCancelledError` when it is closed first.
 */
export const openOAuthPopup: OpenAuthorizationWindow = ({ url, redirectUri, signal }) =>
  new Promise((resolve, reject) => {
    const width = 500
    const height = 640
    const left = Math.max(0, (window.screenX ?? 0) + (window.outerWidth - width) / 2)
    const top = Math.max(0, (window.screenY ?? 0) + (window.outerHeight - height) / 2)
    const popup = window.open(
      url,
      'latchkey-oauth',
      `popup,width=${width},height=${height},left=${left},top=${top}`,
    )
    if (!popup) return reject(new PopupBlockedError())
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
