import { SESSION_KEY_MESSAGES } from '@latchkey/protocol'
import { type ApiError, AuthenticationError, PermissionError } from '../kernel/base/errors.ts'
import type { Caller } from '../kernel/Caller.ts'
import type { ActivityRow } from '../kernel/store/model.ts'
import { isExpired } from '../kernel/store/model.ts'
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

/**
 * The submitter a stored activity may run as at `now` (`submitterOf`), else the refusal a new
 * request with its credential would get: 403 when the user or the credential is gone, 401
 * `API_KEY_EXPIRED` when the API key that submitted it has outlived its lifetime (a session that
 * submitted an activity awaiting consensus and ended before the last approval): nothing runs as
 * a key that could no longer sign in, so a waiting `create_api_keys` or `stamp_login` mints no
 * durable key or new session from a session that is over.
 */
export async function submitterNow(
  tx: Reads,
  activity: ActivityRow,
  now: number,
): Promise<Caller | ApiError> {
  const submitter = await submitterOf(tx, activity)
  if (!submitter)
    return new PermissionError({
      message: `the user or the credential that submitted activity ${activity.id} is gone: it no longer runs`,
      extra: { outcome: 'OUTCOME_DENY_IMPLICIT', activityId: activity.id },
    })
  const key =
    submitter.credential.kind === 'API_KEY' ? await tx.get('apiKeys', submitter.credential.id) : undefined
  if (key && isExpired(key, now))
    return new AuthenticationError({ code: 'API_KEY_EXPIRED', message: SESSION_KEY_MESSAGES.expired })
  return submitter
}
