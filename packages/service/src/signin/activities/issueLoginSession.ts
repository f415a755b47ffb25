import type { CredentialType } from '@latchkey/protocol'
import { issueSession, MAX_SESSION_SECONDS, normalizeSessionPublicKey } from '../../domain/sessions.ts'
import type { Reader } from '../../kernel/Reader.ts'
import type { ActivityContext } from '../../kernel/registry.ts'
import type { SessionOrigin, UserRow } from '../../kernel/store/model.ts'
import { type SpentError, type SpentKind, spendOnce } from '../spendOnce.ts'

/** What every login asks for besides its proof: the session key, its lifetime, whether older sessions end. */
export interface LoginParameters {
  publicKey: string
  expirationSeconds?: string
  invalidateExisting?: boolean
  /** The session profile whose scope confines the session (issue 37). */
  sessionProfileId?: string
}

/**
 * Parses a login activity: the session options, then the login's own proof (`proof(r)`: a token,
 * a signature over it), then the session key, in that order (the first wrong field is the one named).
 */
export function parseLogin<T extends object>(r: Reader, proof: (r: Reader) => T): T & LoginParameters {
  const expirationSeconds = r.optUintString('expirationSeconds', { max: MAX_SESSION_SECONDS })
  const invalidateExisting = r.optBool('invalidateExisting')
  const sessionProfileId = r.optString('sessionProfileId', { max: 200 })
  const own = proof(r)
  return {
    ...own,
    publicKey: normalizeSessionPublicKey(r.string('publicKey', { max: 200 }), r.field('publicKey')),
    ...(expirationSeconds !== undefined ? { expirationSeconds } : {}),
    ...(invalidateExisting !== undefined ? { invalidateExisting } : {}),
    ...(sessionProfileId !== undefined ? { sessionProfileId } : {}),
  }
}

/**
 * The end of every login once its proof holds: spends the single-use token it was proved with, in
 * the activity's transaction (so only a login that commits spends it), and issues a read-write
 * session for the user's new key.
 */
export async function issueLoginSession(
  ctx: ActivityContext,
  login: {
    user: UserRow
    parameters: LoginParameters
    /** What the session descends from: the stamp's passkey or key (`sessionOriginOf`), or a one-time token. */
    origin: SessionOrigin
    /** The token the login was proved with, spent once. */
    spend?: { kind: SpentKind; id: string; error: SpentError }
    /** The session key's credential type and the name it is registered under (`OTP session <date>`). */
    credential?: { type: CredentialType; label: string }
  },
): Promise<{ session: string }> {
  const { user, parameters: p, spend, credential, origin } = login
  if (spend) await spendOnce(ctx, spend.kind, spend.id, spend.error)
  const { session } = await issueSession(ctx, {
    user,
    publicKey: p.publicKey,
    expirationSeconds: p.expirationSeconds,
    invalidateExisting: p.invalidateExisting,
    sessionProfileId: p.sessionProfileId,
    origin,
    ...(credential
      ? {
          credentialType: credential.type,
          apiKeyName: `${credential.label} session ${new Date(ctx.now).toISOString()}`,
        }
      : {}),
  })
  return { session }
}
