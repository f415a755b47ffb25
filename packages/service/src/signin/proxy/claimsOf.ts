import { decodeJwtClaims } from '@latchkey/protocol'

/** The claims of a JWT the proxy only routes by (the activity verifies it), or {} if it is not one. */
export function claimsOf(token: unknown): Record<string, unknown> {
  if (typeof token !== 'string') return {}
  try {
    return decodeJwtClaims<Record<string, unknown>>(token)
  } catch {
    return {}
  }
}
