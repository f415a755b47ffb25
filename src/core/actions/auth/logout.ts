import { isSessionKeyRejected } from '../../errors.ts'
import { deleteSession } from '../../session/createSessionStore.ts'
import { adoptPersistedKey } from '../../session/hydrateSessions.ts'
import { isUsable } from '../../session/sessionMachine.ts'
import type { Latchkey } from '../../types.ts'
import { revokeSessionKey } from './revokeSessionKey.ts'

export type LogoutParameters = {
  /** @default the active session */
  sessionId?: string | undefined
}
export type LogoutReturnType = {
  sessionId: string | null
  /** True when the service deleted the session key (`delete_api_keys`). */
  revoked: boolean
}

/**
 * Signs a session out: revokes its key on the service (`delete_api_keys`), then deletes the key
 * and the session locally. The local part always happens, so a network failure cannot leave
 * the person stuck signed in; the failure is rethrown after.
 */
export async function logout(client: Latchkey, parameters: LogoutParameters = {}): Promise<LogoutReturnType> {
  await client.hydrate()
  const id = parameters.sessionId ?? client.store.getState().activeId ?? ''
  // From here no refresh of the session starts (`refreshSession` refuses while this is set): one
  // started during the revocation below would register a key that outlives the sign-out.
  const marker = `logout:${id}`
  const pending = client.tasks.get(marker) as Promise<LogoutReturnType> | undefined
  if (pending) return pending
  const task = signOut(client, id)
  client.tasks.set(marker, task)
  return task.finally(() => client.tasks.delete(marker))
}

async function signOut(client: Latchkey, id: string): Promise<LogoutReturnType> {
  // A refresh under way registers a new key for the session: wait for it, then revoke the key the
  // session holds by then (revoking the old one would leave the new one live after sign-out).
  await client.tasks.get(`refresh:${id}`)?.catch(() => undefined)
  // Another tab may have refreshed the session since this one read it: sign out with the key it
  // holds now (this tab's is revoked already, or will be), and delete both.
  const replaced = await adoptPersistedKey(client, id)
  const session = client.store.getState().sessions[id]
  if (!session) return { sessionId: null, revoked: false }
  let revoked = false
  let failure: unknown
  if (session.publicKey && isUsable(session.status)) {
    try {
      revoked = await revokeSessionKey(client, {
        sessionId: session.id,
        userId: session.userId,
        publicKey: session.publicKey,
      })
    } catch (error) {
      // A key the service already refuses is as good as revoked.
      if (!isSessionKeyRejected(error)) failure = error
    }
  }
  if (session.publicKey) await client.keyStore.delete(session.publicKey).catch(() => undefined)
  if (replaced) await client.keyStore.delete(replaced).catch(() => undefined)
  client.tokens.delete(session.id)
  deleteSession(client.store, session.id)
  if (failure) throw failure
  return { sessionId: session.id, revoked }
}
