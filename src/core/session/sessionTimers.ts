import type { Latchkey } from '../types.ts'
import { dispatchSessionEvent } from './createSessionStore.ts'
import { isUsable } from './sessionMachine.ts'

/** setTimeout caps delays at 2^31-1 ms; longer ones are re-armed in steps. */
const MAX_DELAY = 2_147_483_647

interface Scheduled {
  expiresAt: number
  timers: ReturnType<typeof setTimeout>[]
}

/**
 * Arms, for EVERY usable session (not only the active one), a warning timer (→ `expiring`, and
 * an auto-refresh when enabled) and an expiry timer (→ `expired`). Re-arms when a refresh moves
 * the expiry. `refresh` renews a session (injected, so the timers need not know the actions).
 * In Node they are unref'd: a back end's client never holds its process open. Returns a stop
 * function.
 */
export function startSessionTimers(
  client: Latchkey,
  refresh: (sessionId: string) => Promise<unknown>,
): () => void {
  const scheduled = new Map<string, Scheduled>()
  const clear = (id: string) => {
    for (const timer of scheduled.get(id)?.timers ?? []) clearTimeout(timer)
    scheduled.delete(id)
  }
  const at = (when: number, run: () => void, entry: Scheduled) => {
    const arm = () => {
      const delay = Math.max(0, when - Date.now())
      const timer = setTimeout(delay > MAX_DELAY ? arm : run, Math.min(delay, MAX_DELAY))
      // In Node (a back end, a script, a serverless function) a session's timers keep no process
      // alive: they only move its state, and an idle process should end (or freeze) on time.
      ;(timer as { unref?: () => void }).unref?.()
      entry.timers.push(timer)
    }
    arm()
  }
  const sync = () => {
    const { sessions } = client.store.getState()
    for (const id of scheduled.keys()) {
      const session = sessions[id]
      if (!session || !isUsable(session.status) || session.expiresAt !== scheduled.get(id)?.expiresAt)
        clear(id)
    }
    for (const session of Object.values(sessions)) {
      if (!isUsable(session.status) || scheduled.has(session.id)) continue
      const entry: Scheduled = { expiresAt: session.expiresAt, timers: [] }
      scheduled.set(session.id, entry)
      const { warningLeadMs, autoRefresh } = client.config.session
      at(
        session.expiresAt - warningLeadMs,
        () => dispatchSessionEvent(client.store, session.id, { type: 'WARN' }),
        entry,
      )
      if (autoRefresh && session.sessionType === 'SESSION_TYPE_READ_WRITE') {
        // A session shorter than the lead would refresh at once, and its successor too, forever:
        // refresh no earlier than three quarters into its lifetime.
        const refreshLead = Math.min(warningLeadMs, Math.max(0, session.expiresAt - session.createdAt) / 4)
        at(
          session.expiresAt - refreshLead,
          // A failed refresh leaves the session `expiring`; the expiry timer still ends it.
          () => refresh(session.id).catch(() => undefined),
          entry,
        )
      }
      at(
        session.expiresAt,
        () => {
          const current = client.store.getState().sessions[session.id]
          if (current?.expiresAt !== session.expiresAt) return
          dispatchSessionEvent(client.store, session.id, { type: 'EXPIRE' })
        },
        entry,
      )
    }
  }
  const unsubscribe = client.store.subscribe((state, previous) => {
    if (state.sessions !== previous.sessions) sync()
  })
  return () => {
    unsubscribe()
    for (const id of [...scheduled.keys()]) clear(id)
  }
}
