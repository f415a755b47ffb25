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
 * out never shows one person's data to another; `enabled` is false without a usable session.
 */
export function sessionScope(client: Latchkey, sessionId?: string | undefined) {
  const { activeId, sessions } = client.store.getState()
  const session = sessions[sessionId ?? activeId ?? '']
  return {
    session,
    scope: { sessionId: session?.id ?? null, organizationId: session?.organizationId ?? null },
    enabled: Boolean(session && isUsable(session.status)),
  }
}

/** Stored in a mutation's `meta`: the query families to invalidate when it succeeds (`'*'`: all). */
export interface LatchkeyMutationMeta extends Record<string, unknown> {
  invalidates: readonly (QueryName | '*')[]
}
