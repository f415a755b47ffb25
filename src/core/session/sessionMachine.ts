/** Status of one session. The client's status is its active session's, or `signed-out`. */
export type SessionStatus = 'active' | 'expiring' | 'expired' | 'storage-lost'
export type ClientStatus = 'signed-out' | SessionStatus

export type SessionEvent =
  /** A login (or a restore from storage) produced a usable session. */
  | { type: 'SIGNED_IN' }
  /** The warning lead time before expiry was reached. */
  | { type: 'WARN' }
  /** A new key and expiry replaced the old ones. */
  | { type: 'REFRESHED' }
  /** The expiry passed, or the service refused the key as expired or unknown. */
  | { type: 'EXPIRE' }
  /** The session's private key is gone from the key store (evicted or cleared). */
  | { type: 'KEY_MISSING' }

/**
 * The session state machine. Events that make no sense in a state leave it unchanged (a late
 * WARN timer for an already expired session must not resurrect it).
 *
 * ```
 * (none) --SIGNED_IN--> active --WARN--> expiring --EXPIRE--> expired
 *                          ^--REFRESHED----'   active --EXPIRE--> expired
 * any --KEY_MISSING--> storage-lost          expired/storage-lost --SIGNED_IN--> active
 * ```
 */
export function sessionTransition(
  status: SessionStatus | undefined,
  event: SessionEvent,
): SessionStatus | undefined {
  switch (event.type) {
    case 'SIGNED_IN':
      return 'active'
    case 'WARN':
      return status === 'active' ? 'expiring' : status
    case 'REFRESHED':
      return status === 'active' || status === 'expiring' ? 'active' : status
    case 'EXPIRE':
      return status === 'active' || status === 'expiring' ? 'expired' : status
    case 'KEY_MISSING':
      return status === undefined ? status : 'storage-lost'
  }
}

/** Whether a session in this status can stamp requests. */
export const isUsable = (status: SessionStatus | undefined): boolean =>
  status === 'active' || status === 'expiring'
