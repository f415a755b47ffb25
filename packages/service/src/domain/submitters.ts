import type { Caller } from '../kernel/Caller.ts'
import type { ActivityRow } from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Store.ts'
import { ATTESTED_CREDENTIAL_PREFIX } from './sessions.ts'

/**
 * The submitter of a stored activity as they are now, with the credential that submitted it: a
 * session key keeps its session profile (its scope and spending limits still confine it).
 * Undefined when the user or that credential is gone (deleted, logged out): nothing may run as
 * them any more. A token-attested stamp (`stamp_login`) names no stored credential.
 */
export async function submitterOf(tx: Reads, activity: ActivityRow): Promise<Caller | undefined> {
  const user = await tx.get('users', activity.userId)
  if (!user) return undefined
  const base = { publicKey: '', scheme: '', signature: '' }
  const caller = (credential: Caller['credential']): Caller => ({
    userId: user.id,
    organizationId: user.organizationId,
    credential,
    readOnly: false,
  })
  const key = await tx.get('apiKeys', activity.credentialId)
  if (key?.userId === user.id)
    return caller({
      kind: 'API_KEY',
      id: key.id,
      ...base,
      ...(key.sessionProfileId !== undefined ? { sessionProfileId: key.sessionProfileId } : {}),
    })
  const passkey = key ? undefined : await tx.get('authenticators', activity.credentialId)
  if (passkey?.userId === user.id) return caller({ kind: 'WEBAUTHN', id: passkey.id, ...base })
  if (activity.credentialId.startsWith(ATTESTED_CREDENTIAL_PREFIX))
    return caller({ kind: 'API_KEY', id: activity.credentialId, ...base })
  return undefined
}
