import { LatchkeyError } from '../baseErrors.ts'
import { isUsable } from '../session/sessionMachine.ts'
import type { Latchkey } from '../types.ts'

/** First element of every Latchkey query key, so apps can target all of them. */
export const QUERY_SCOPE = 'latchkey' as const

/** Names of the query families; mutations list the ones they make stale. */
export type QueryName =
  | 'walletKitConfig'
  | 'whoami'
  | 'user'
  | 'users'
  | 'wallet'
  | 'wallets'
  | 'walletAccounts'
  | 'userTags'
  | 'subOrganizations'
  | 'authenticator'
  | 'policyEvaluations'
  | 'policy'
  | 'policies'
  | 'activity'
  | 'apiKeys'
  | 'callsStatus'
  // MFA (issue 38)
  | 'mfaFactors'
  | 'mfaPolicies'
  // issue 37: spending limits
  | 'spendingLimits'
  // issue 38: linked logins
  | 'linkedLogins'

/** Strips functions, signals and undefined so a key is plain, stable data. */
export function keyParameters<T extends object>(parameters: T): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(parameters)) {
    if (value === undefined || typeof value === 'function' || name === 'signal') continue
    out[name] = value
  }
  return out
}

/** `['latchkey', name, { ...parameters }]`: data, so invalidation can match by prefix. */
export const queryKeyOf = <N extends QueryName>(name: N, parameters: object) =>
  [QUERY_SCOPE, name, keyParameters(parameters)] as const

/**
 * Which session a query reads as. The session id is part of the key, so switching or signing
 * out never shows one person's data to another. Without a session the query waits (`enabled`
 * false) for a sign-in. A session that can no longer sign (`expired`, `storage-lost`) adds its
 * status to the key: the query leaves the data it read while live and runs, and its action fails
 * at once with `SessionExpiredError` (or `NotSignedInError`), so a hook never waits on a session
 * that cannot come back.
 */
export function sessionScope(client: Latchkey, sessionId?: string | undefined) {
  const { activeId, sessions } = client.store.getState()
  const session = sessions[sessionId ?? activeId ?? '']
  const ended = session && !isUsable(session.status) ? { sessionStatus: session.status } : {}
  return {
    session,
    scope: { sessionId: session?.id ?? null, organizationId: session?.organizationId ?? null, ...ended },
    enabled: session !== undefined,
  }
}

/** True for the errors that say the session cannot sign: retrying cannot help. */
export const isSessionEndedError = (error: unknown): boolean =>
  error instanceof LatchkeyError && (error.code === 'SESSION_EXPIRED' || error.code === 'NOT_SIGNED_IN')

/**
 * TanStack's `retry` for Latchkey queries: never after a session error (the hook shows it at
 * once), else the caller's `retry` or TanStack's default of three.
 */
export function retryUnlessSessionEnded(
  retry: boolean | number | ((failureCount: number, error: LatchkeyError) => boolean) | undefined,
) {
  return (failureCount: number, error: LatchkeyError): boolean => {
    if (isSessionEndedError(error)) return false
    if (typeof retry === 'function') return retry(failureCount, error)
    if (typeof retry === 'boolean') return retry
    return failureCount < (retry ?? 3)
  }
}

/** Stored in a mutation's `meta`: the query families to invalidate when it succeeds (`'*'`: all). */
export interface LatchkeyMutationMeta extends Record<string, unknown> {
  invalidates: readonly (QueryName | '*')[]
}
