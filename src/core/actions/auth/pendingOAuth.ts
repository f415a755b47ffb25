import type { Latchkey } from '../../types.ts'
import type { PendingOAuth } from './oauthShared.ts'

/** sessionStorage: per tab, cleared with it; never localStorage. */
const keyOf = (client: Latchkey) => `latchkey.oauth.${client.config.organizationId}`

/** Pending redirects older than this are refused. */
export const PENDING_OAUTH_TTL_MS = 10 * 60_000

export function savePendingOAuth(client: Latchkey, pending: PendingOAuth): void {
  sessionStorage.setItem(keyOf(client), JSON.stringify(pending))
}

/** Reads and removes the pending redirect sign-in (single use). */
export function takePendingOAuth(client: Latchkey): PendingOAuth | undefined {
  if (typeof sessionStorage === 'undefined') return undefined
  const text = sessionStorage.getItem(keyOf(client))
  if (!text) return undefined
  sessionStorage.removeItem(keyOf(client))
  try {
    const pending = JSON.parse(text) as PendingOAuth
    return Date.now() - pending.createdAt < PENDING_OAUTH_TTL_MS ? pending : undefined
  } catch {
    return undefined
  }
}

/** True when this page load may be the return of a redirect sign-in. */
export function hasPendingOAuth(client: Latchkey): boolean {
  try {
    return typeof sessionStorage !== 'undefined' && sessionStorage.getItem(keyOf(client)) !== null
  } catch {
    return false
  }
}
