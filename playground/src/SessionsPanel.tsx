import { useSessionState, useSessions, useSwitchSession } from 'latchkey'

/**
 * Every session this browser holds (one per signed-in account), which one is active, switching,
 * and signing in to one more account beside the current one.
 */
export function SessionsPanel({ onAddAccount }: { onAddAccount: () => void }) {
  const sessions = useSessions()
  // The active one even once it has ended (then listed as expired).
  const activeId = useSessionState((state) => state.activeId)
  const switchSession = useSwitchSession()
  const list = Object.values(sessions).sort((a, b) => a.createdAt - b.createdAt)
  return (
    <section className="pg-card" aria-labelledby="pg-sessions-title">
      <div className="pg-card-head">
        <h2 id="pg-sessions-title">Sessions in this browser</h2>
        <button type="button" className="pg-button pg-button-small" onClick={onAddAccount}>
          Add another account
        </button>
      </div>
      <ul className="pg-list" aria-label="Sessions">
        {list.map((session) => {
          const active = session.id === activeId
          return (
            <li key={session.id} data-active={active}>
              <span style={{ minWidth: 0 }}>
                <strong style={{ display: 'block', overflowWrap: 'anywhere' }}>
                  {session.label ?? session.userId}
                </strong>
                <span className="pg-muted">
                  {session.method} · {session.status} · until{' '}
                  {new Date(session.expiresAt).toLocaleTimeString()}
                </span>
              </span>
              {active ? (
                <span className="pg-chip">
                  <span className="pg-dot" aria-hidden="true" /> Active
                </span>
              ) : (
                <button
                  type="button"
                  className="pg-button pg-button-small"
                  onClick={() => switchSession(session.id)}
                  aria-label={`Switch to ${session.label ?? session.userId}`}
                >
                  Switch
                </button>
              )}
            </li>
          )
        })}
      </ul>
    </section>
  )
}
