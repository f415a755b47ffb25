import type { Latchkey } from '../types.ts'
import { putSession } from './createSessionStore.ts'
import { parseSessions, serializeSessions, sessionsStorageKey, storageOf } from './persistence.ts'
import type { Session } from './types.ts'

/** Keys younger than this survive cleanup: a sign-in may be using them (e.g. an OAuth redirect). */
const KEY_GRACE_MS = 15 * 60_000

/**
 * Restores persisted sessions: each gets `active`, `expired` (past its expiry) or `storage-lost`
 * (its private key is gone from the key store). Then deletes stored keys no session uses.
 */
export async function hydrateSessions(client: Latchkey): Promise<void> {
  const storage = storageOf(client.config)
  let persisted: ReturnType<typeof parseSessions>
  try {
    persisted = parseSessions(storage?.getItem(sessionsStorageKey(client.config.organizationId)) ?? null)
  } catch {
    persisted = undefined
  }
  const restored: Record<string, Session> = {}
  const now = Date.now()
  for (const saved of persisted?.sessions ?? []) {
    let hasKey = false
    try {
      hasKey = saved.publicKey ? (await client.keyStore.get(saved.publicKey)) !== undefined : false
    } catch {
      hasKey = false
    }
    const status = !hasKey ? 'storage-lost' : saved.expiresAt <= now ? 'expired' : 'active'
    restored[saved.id] = { ...saved, status }
  }
  client.store.setState((state) => {
    // Sessions added while hydrating (a sign-in that raced the restore) win over stored ones.
    const sessions = { ...restored, ...state.sessions }
    const activeId =
      state.activeId ?? (persisted?.activeId && sessions[persisted.activeId] ? persisted.activeId : null)
    const fallback =
      activeId ?? Object.values(sessions).sort((a, b) => b.createdAt - a.createdAt)[0]?.id ?? null
    return {
      ...state,
      sessions,
      activeId: fallback,
      status: (fallback && sessions[fallback]?.status) || 'signed-out',
      hydrated: true,
    }
  })
  try {
    const inUse = Object.values(client.store.getState().sessions).flatMap((s) =>
      s.publicKey ? [s.publicKey] : [],
    )
    await client.keyStore.cleanup(inUse, Date.now() - KEY_GRACE_MS, client.config.organizationId)
  } catch {
    // Cleanup is housekeeping; an unavailable key store surfaces on the next real use.
  }
}

/** Writes the persisted whitelist after every change, once hydrated. Returns an unsubscribe. */
export function startSessionPersistence(client: Latchkey): () => void {
  return client.store.subscribe((state, previous) => {
    if (!state.hydrated) return
    if (state.sessions === previous.sessions && state.activeId === previous.activeId && previous.hydrated)
      return
    const storage = storageOf(client.config)
    if (!storage) return
    try {
      storage.setItem(
        sessionsStorageKey(client.config.organizationId),
        serializeSessions(state.activeId, Object.values(state.sessions)),
      )
    } catch {
      // Quota or privacy mode: sessions keep working for this page.
    }
  })
}

/**
 * Takes the key another tab of this origin refreshed the session to (sessions and keys are shared
 * through storage and the key store; each tab refreshes on its own timers): when the persisted
 * session `sessionId` holds another key that the key store has, and expires no sooner, this tab's
 * copy takes it. Returns the key it held before, if it changed (revoked by the tab that refreshed,
 * or about to be), so a sign-out revokes and deletes the key the session really holds now.
 */
export async function adoptPersistedKey(client: Latchkey, sessionId: string): Promise<string | undefined> {
  const current = client.store.getState().sessions[sessionId]
  if (!current) return undefined
  let saved: ReturnType<typeof parseSessions>
  try {
    saved = parseSessions(
      storageOf(client.config)?.getItem(sessionsStorageKey(client.config.organizationId)) ?? null,
    )
  } catch {
    return undefined
  }
  const persisted = saved?.sessions.find((session) => session.id === sessionId)
  if (!persisted?.publicKey || persisted.publicKey === current.publicKey) return undefined
  // A refresh's expiry is in whole seconds (the JWT's); one more than a second older is stale.
  if (persisted.expiresAt + 1000 < current.expiresAt) return undefined
  const key = await client.keyStore.get(persisted.publicKey).catch(() => undefined)
  if (!key) return undefined
  putSession(
    client.store,
    {
      ...current,
      publicKey: persisted.publicKey,
      expiresAt: persisted.expiresAt,
      lifetimeSeconds: persisted.lifetimeSeconds,
      status: persisted.expiresAt > Date.now() ? 'active' : current.status,
    },
    false,
  )
  return current.publicKey
}
