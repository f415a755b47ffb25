import { decodeJwtClaims, type SessionClaims } from '@latchkey/protocol'
import { NotSignedInError } from '../../errors.ts'
import { dispatchSessionEvent } from '../../session/createSessionStore.ts'
import { requireSession } from '../../session/sessions.ts'
import type { Session } from '../../session/types.ts'
import { submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { revokeSessionKey } from './revokeSessionKey.ts'

export type RefreshSessionParameters = { sessionId?: string | undefined }
export type RefreshSessionReturnType = Session

/**
 * Extends a read-write session: a new non-extractable key is registered through `stamp_login`
 * stamped by the old key, which is then revoked and deleted. Concurrent calls share one refresh.
 */
export function refreshSession(
  client: Latchkey,
  parameters: RefreshSessionParameters = {},
): Promise<Session> {
  const session = requireSession(client, parameters.sessionId)
  // Signing out: a key registered now would outlive the sign-out (`logout`).
  if (client.tasks.has(`logout:${session.id}`)) return Promise.reject(new NotSignedInError())
  const taskKey = `refresh:${session.id}`
  const pending = client.tasks.get(taskKey) as Promise<Session> | undefined
  if (pending) return pending
  const task = (async () => {
    const oldKey = session.publicKey
    const key = await client.keyStore.create({ scope: client.config.organizationId })
    try {
      const { result } = await submit(
        client,
        'stamp_login',
        { publicKey: key.publicKey, expirationSeconds: String(session.lifetimeSeconds) },
        { sessionId: session.id, organizationId: session.organizationId },
      )
      const claims = decodeJwtClaims<SessionClaims>(result.session)
      dispatchSessionEvent(
        client.store,
        session.id,
        { type: 'REFRESHED' },
        {
          publicKey: key.publicKey,
          expiresAt: claims.exp * 1000,
        },
      )
    } catch (error) {
      await client.keyStore.delete(key.publicKey).catch(() => undefined)
      throw error
    }
    if (oldKey) {
      // The old key would expire anyway; revoking it now shortens its useful life for a thief.
      await revokeSessionKey(client, {
        sessionId: session.id,
        userId: session.userId,
        publicKey: oldKey,
      }).catch(() => undefined)
      await client.keyStore.delete(oldKey).catch(() => undefined)
    }
    return client.store.getState().sessions[session.id] as Session
  })()
  client.tasks.set(taskKey, task)
  return task.finally(() => client.tasks.delete(taskKey))
}
