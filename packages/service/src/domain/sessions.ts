import { type CredentialType, SESSION_KEY_MESSAGES, type SessionClaims } from '@latchkey/protocol'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { recordAppEvent } from '../kernel/appEvents.ts'
import { AuthenticationError, FieldError, NotFoundError } from '../kernel/base/errors.ts'
import { signJwt } from '../kernel/crypto/index.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { ActivityContext } from '../kernel/registry.ts'
import {
  type ApiKeyRow,
  apiKeyInOrganization,
  isExpired,
  keyExpiresAt,
  type SessionOrigin,
  type SessionProfileRow,
  type UserRow,
} from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Reads.ts'
import type { Transaction } from '../kernel/store/Store.ts'
import { proxyConfigFor } from './proxyConfigFor.ts'
import { verifiedContact } from './verifiedContact.ts'

/** Default read-write session lifetime (seconds): 15 minutes. */
export const DEFAULT_SESSION_SECONDS = 900
/** Read-only session lifetime (seconds): 1 hour. */
export const READ_ONLY_SESSION_SECONDS = 3600
/** Longest session a login may ask for: 30 days. */
export const MAX_SESSION_SECONDS = 30 * 24 * 3600

/**
 * Credential ids of callers attested by a verification token (the sign-in wing's attested stamps)
 * start with this: no stored credential has such an id; only `stamp_login` accepts them.
 */
export const ATTESTED_CREDENTIAL_PREFIX = 'attested:'

/** Credential types that are login (session) keys: `invalidateExisting` revokes these. */
export const SESSION_CREDENTIAL_TYPES: readonly CredentialType[] = [
  'CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256',
  'CREDENTIAL_TYPE_OTP_AUTH_KEY_P256',
  'CREDENTIAL_TYPE_OAUTH_KEY_P256',
  'CREDENTIAL_TYPE_EMAIL_AUTH_KEY_P256',
  'CREDENTIAL_TYPE_LOGIN',
]

/**
 * The operator's ceiling on the sessions of `organizationId` and the rest of its tree, in seconds
 * (`maxSessionExpirationSeconds` of the top-level organization's auth-proxy settings), or
 * undefined: none set.
 */
export async function sessionCeilingOf(reads: Reads, organizationId: string): Promise<number | undefined> {
  const ceiling = (await proxyConfigFor(reads, organizationId))?.settings.maxSessionExpirationSeconds
  return ceiling === undefined ? undefined : Number(ceiling)
}

/** A login (session) key that has not expired yet: deleting it ends a session. */
export function isLiveSession(key: ApiKeyRow, now: number): boolean {
  if (!SESSION_CREDENTIAL_TYPES.includes(key.credentialType)) return false
  return !isExpired(key, now)
}

/**
 * Whether `key` is a session: a login key, or a key that records what it descends from (every
 * session records its origin, a sign-up's first session key too). Deleting one is a logout. Any
 * other key is a durable way in (a wallet's sign-in key, a recovery key, a back end's key), whose
 * deletion ends the sessions it opened; a key with neither (a first session key an older instance
 * wrote without its origin included) counts as durable.
 */
export const isSessionKey = (key: ApiKeyRow): boolean =>
  key.origin !== undefined || SESSION_CREDENTIAL_TYPES.includes(key.credentialType)

/** Compressed hex of a P-256 session public key (compressed or uncompressed input); 400 otherwise. */
export function normalizeSessionPublicKey(publicKey: string, field: string): string {
  try {
    return bytesToHex(
      p256.Point.fromBytes(hexToBytes(publicKey.replace(/^0x/, '').toLowerCase())).toBytes(true),
    )
  } catch {
    throw new FieldError({ field, reason: 'must be a P-256 public key in hex (33 or 65 bytes)' })
  }
}

/** Signs a session JWT (ES256, service session key) with the claims of `@latchkey/protocol` `session.ts`. */
export function signSession(runtime: Runtime, claims: SessionClaims): string {
  const key = runtime.sessionPrivateKey()
  try {
    return signJwt(claims, key, 'session')
  } finally {
    key.fill(0)
  }
}

/**
 * The session profile (issue 37) a login names for `user`: one of the user's organization, or of
 * its parent (the app's profiles, shared by its sub-organizations); any other is a 404 naming
 * `field`, so a sub-organization cannot use another's profile.
 */
export async function sessionProfileFor(
  reads: Reads,
  user: UserRow,
  sessionProfileId: string,
  field: string,
): Promise<SessionProfileRow> {
  const profile = await reads.get('sessionProfiles', sessionProfileId)
  const organization = await reads.get('organizations', user.organizationId)
  if (
    profile &&
    (profile.organizationId === user.organizationId ||
      profile.organizationId === organization?.parentOrganizationId)
  )
    return profile
  throw new NotFoundError({
    code: 'SESSION_PROFILE_NOT_FOUND',
    field,
    message: `session profile ${sessionProfileId} not found in organization ${user.organizationId} or its parent`,
  })
}

/** Whose session a revocation names: its user and the user's organization. */
type SessionHolder = Pick<UserRow, 'id' | 'organizationId'>

/** The user's organization as an app event names it (its parent known when it is the activity's). */
const organizationOf = (ctx: ActivityContext, user: SessionHolder) =>
  ctx.organization.id === user.organizationId
    ? { id: user.organizationId, parentOrganizationId: ctx.organization.parentOrganizationId }
    : { id: user.organizationId }

/**
 * How long a login key is kept once expired: until then a request stamped with it is refused as
 * expired (`API_KEY_EXPIRED`, which the kit answers by signing in again); past it, the user's next
 * login deletes it, so a user's keys do not pile up with every device and browser they sign in on.
 */
export const EXPIRED_SESSION_KEY_KEPT_MS = 7 * 24 * 3600 * 1000

const longExpired = (key: ApiKeyRow, now: number) =>
  (keyExpiresAt(key) ?? Number.POSITIVE_INFINITY) + EXPIRED_SESSION_KEY_KEPT_MS <= now

/**
 * Live login sessions one user holds at most: a login past it ends the oldest (`too_many_sessions`,
 * with its app event). Each login adds a key row that lives up to `MAX_SESSION_SECONDS`, so
 * without it one user's logins grew their rows (and every scan of the user's keys) by the rate
 * limit alone for a month.
 */
export const MAX_LIVE_SESSIONS_PER_USER = 100

/** The app event of a live login session a login ended (`LATCHKEY_SESSION_REVOKED`). */
const recordRevoked = (
  ctx: ActivityContext,
  user: SessionHolder,
  key: ApiKeyRow,
  reason: 'invalidate_existing' | 'too_many_sessions' | 'credential_removed' | 'logout' | 'deleted',
) =>
  recordAppEvent(ctx.runtime, ctx.tx, {
    id: `${ctx.activityId}.revoked.${key.id}`,
    organization: organizationOf(ctx, user),
    type: 'LATCHKEY_SESSION_REVOKED',
    data: { userId: user.id, apiKeyId: key.id, reason, activityId: ctx.activityId },
  })

/** Ends the oldest of the user's login sessions `kept` so that one more fits under the cap. */
async function endOldestSessions(ctx: ActivityContext, user: UserRow, kept: ApiKeyRow[]): Promise<void> {
  const excess = kept.length + 1 - MAX_LIVE_SESSIONS_PER_USER
  if (excess <= 0) return
  // Expired ones first, then the oldest live ones.
  const live = (key: ApiKeyRow) => (isLiveSession(key, ctx.now) ? 1 : 0)
  const oldest = [...kept]
    .sort((a, b) => live(a) - live(b) || a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))
    .slice(0, excess)
  let ended = 0
  for (const key of oldest) {
    await ctx.tx.delete('apiKeys', key.id)
    if (!isLiveSession(key, ctx.now)) continue
    ended++
    await recordRevoked(ctx, user, key, 'too_many_sessions')
  }
  if (ended > 0) ctx.report('signin.sessions_revoked', { reason: 'too_many_sessions', count: ended })
}

/**
 * The keys of the user a login stamped by a session key (`origin.renewedFrom`: a refresh, or a
 * confined session it issues) keeps under `invalidateExisting`: the other keys of the caller's
 * own sign-in, which are the same session in the user's eyes (another tab's refresh, or a copy a
 * thief renewed) and end together at its logout (`endSignIns`). The key that stamped it goes as
 * every other login key does, and so do the confined sessions its sign-in issued (`issuedBy`:
 * sign-ins of their own, which would end with it anyway). Without this, a thief renewing a copy with `invalidateExisting`
 * deleted the owner's key of that sign-in, and the owner's next sign-in and logout, a sign-in of
 * their own, left the thief's renewals alive. A fresh login (passkey, registered key, one-time
 * token: no `renewedFrom`) keeps none.
 */
const signInKeptBy = (origin: SessionOrigin): ((key: ApiKeyRow) => boolean) => {
  const { renewedFrom, signIn } = origin
  if (renewedFrom === undefined || signIn === undefined) return () => false
  return (key) => key.id !== renewedFrom && signInOf(key) === signIn
}

/**
 * The whole seconds left, from `now`, to the earliest expiry among the keys a session descends
 * from (`origin.apiKeyIds`: a registered key with a lifetime that stamped the login, or the one
 * its renewals carry forward), found among the user's `keys` (every opener is the user's own,
 * `sessionOriginOf`); rounded down, so a session cut to it ends no later than the key. Undefined
 * when none of them expires. A session opened by a passkey or a one-time token (an OTP or OAuth
 * login: `origin` names no key) is not cut.
 */
export function secondsLeftOfOpeners(
  origin: SessionOrigin,
  keys: readonly ApiKeyRow[],
  now: number,
): number | undefined {
  let earliest: number | undefined
  for (const id of origin.apiKeyIds ?? []) {
    const opener = keys.find((key) => key.id === id)
    const end = opener && keyExpiresAt(opener)
    if (end === undefined) continue
    earliest = earliest === undefined ? end : Math.min(earliest, end)
  }
  return earliest === undefined ? undefined : Math.floor((earliest - now) / 1000)
}

/**
 * A read-write session: registers `publicKey` on the user as an expiring session API key
 * (`invalidateExisting` first revokes the user's other login keys, but for those of the caller's
 * own sign-in when a session key stamped the login, `signInKeptBy`; login keys expired longer
 * than `EXPIRED_SESSION_KEY_KEPT_MS` go in any case) and returns the JWT. It lives what the login
 * asked (or its profile says), cut to the operator's ceiling and to the earliest expiry of the
 * keys it descends from (`secondsLeftOfOpeners`): a session a temporary key opened, and every
 * renewal of it, ends with that key.
 */
export async function issueSession(
  ctx: ActivityContext,
  input: {
    user: UserRow
    /** Compressed P-256 hex (normalise with `normalizeSessionPublicKey`). */
    publicKey: string
    /** Lifetime as the login activities carry it (a decimal string) or a number; at least 1 s. */
    expirationSeconds?: number | string | undefined
    invalidateExisting?: boolean | undefined
    credentialType?: CredentialType
    apiKeyName?: string
    /** What the session descends from (`sessionOriginOf`, or a one-time token): recorded on its key. */
    origin: SessionOrigin
    /**
     * The session profile the login names (`parameters.sessionProfileId`): the session's every
     * activity must satisfy its scope, and it lives the profile's `expirationSeconds` when it has one.
     */
    sessionProfileId?: string | undefined
  },
): Promise<{ session: string; apiKeyId: string; expiresAt: number }> {
  const profile =
    input.sessionProfileId !== undefined
      ? await sessionProfileFor(ctx.tx, input.user, input.sessionProfileId, 'parameters.sessionProfileId')
      : undefined
  const asked = profile?.expirationSeconds ?? input.expirationSeconds
  const keys = await ctx.tx.findBy('apiKeys', 'userId', input.user.id)
  // A session ends no later than a key it descends from: one in its last second opens none.
  const openerLeft = secondsLeftOfOpeners(input.origin, keys, ctx.now)
  if (openerLeft !== undefined && openerLeft < 1)
    throw sessionEnded('the key that opened it expires within a second')
  // The operator's ceiling cuts what the login asked for, or its profile says, and so does that.
  const seconds = Math.min(
    asked !== undefined ? Math.max(1, Number(asked)) : DEFAULT_SESSION_SECONDS,
    (await sessionCeilingOf(ctx.tx, input.user.organizationId)) ?? MAX_SESSION_SECONDS,
    openerLeft ?? MAX_SESSION_SECONDS,
  )
  const ownSignInKept = signInKeptBy(input.origin)
  let revoked = 0
  const kept: ApiKeyRow[] = []
  for (const key of keys) {
    const isLogin = SESSION_CREDENTIAL_TYPES.includes(key.credentialType)
    // Re-logging in with the same key replaces its old registration (fresh expiry).
    if (isLogin && (key.publicKey === input.publicKey || longExpired(key, ctx.now)))
      await ctx.tx.delete('apiKeys', key.id)
    else if (isLogin && input.invalidateExisting && !ownSignInKept(key)) {
      await ctx.tx.delete('apiKeys', key.id)
      if (isLiveSession(key, ctx.now)) {
        revoked++
        await recordRevoked(ctx, input.user, key, 'invalidate_existing')
      }
    } else if (isLogin) kept.push(key)
  }
  if (revoked > 0) ctx.report('signin.sessions_revoked', { reason: 'invalidate_existing', count: revoked })
  await endOldestSessions(ctx, input.user, kept)
  const apiKeyId = ctx.newId()
  await ctx.tx.put('apiKeys', {
    id: apiKeyId,
    organizationId: input.user.organizationId,
    userId: input.user.id,
    name: input.apiKeyName ?? `Session key ${new Date(ctx.now).toISOString()}`,
    publicKey: input.publicKey,
    keyInOrganization: apiKeyInOrganization(input.publicKey, input.user.organizationId),
    curve: 'API_KEY_CURVE_P256',
    credentialType: input.credentialType ?? 'CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256',
    expirationSeconds: String(seconds),
    ...(profile ? { sessionProfileId: profile.id } : {}),
    origin: profile ? ownSignIn(input.origin) : input.origin,
    createdAt: ctx.now,
    updatedAt: ctx.now,
  })
  await recordAppEvent(ctx.runtime, ctx.tx, {
    id: `${ctx.activityId}.login.${apiKeyId}`,
    organization: organizationOf(ctx, input.user),
    type: 'LATCHKEY_LOGIN',
    data: {
      userId: input.user.id,
      sessionType: 'SESSION_TYPE_READ_WRITE',
      credentialType: input.credentialType ?? 'CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256',
    },
  })
  const exp = Math.floor(ctx.now / 1000) + seconds
  const session = signSession(ctx.runtime, {
    exp,
    iat: Math.floor(ctx.now / 1000),
    public_key: input.publicKey,
    session_type: 'SESSION_TYPE_READ_WRITE',
    user_id: input.user.id,
    organization_id: input.user.organizationId,
  })
  return { session, apiKeyId, expiresAt: exp * 1000 }
}

/** The refusal of a login stamped by a session whose origin is gone, or was never recorded. */
const sessionEnded = (why: string) =>
  new AuthenticationError({
    code: 'SESSION_EXPIRED',
    message: `this session has ended: ${why}; sign in again`,
  })

/** The refusal of a login whose stamp's credential is gone by its transaction: as a new request's. */
const credentialGone = () =>
  new AuthenticationError({ code: 'PUBLIC_KEY_NOT_FOUND', message: SESSION_KEY_MESSAGES.notFound })

/**
 * The origin of a key a sign-up registers with a lifetime beside its user (its first session key,
 * `addNewUserCredentials`): the passkeys registered with it, and nothing else. A passkey sign-up
 * makes the passkey and the session key on one device in one ceremony, so taking that device's
 * passkey off the account ends the session it signed up with. A lifelong API key registered
 * beside it did not open it: a registration proves nothing about who holds a key (nothing is
 * signed with it), and a recovery key or a back end's key is kept away from the browser that
 * holds the session, so removing one logs no one out. (The kit's wallet sign-up registers no
 * session key: its session comes from the wallet's own `stamp_login` and descends from the wallet
 * key.) With no passkey (an OTP, OAuth or key-only sign-up) nothing removable opened it: it ends
 * at its expiry, at its logout, or with its user.
 */
export function firstSessionOrigin(authenticatorIds: readonly string[]): SessionOrigin {
  return authenticatorIds.length > 0 ? { authenticatorIds: [...authenticatorIds] } : {}
}

/**
 * Whether `key` is a sign-up's first session key that records no origin: registered with a
 * lifetime in the activity that created its user (the same `createdAt`), written before sessions
 * recorded their origin or by an older instance during a rolling upgrade. Its origin is that of
 * every first session (`firstSessionOrigin`): the passkeys registered with its user. A key with a
 * lifetime added later (`create_api_keys`) is a registered key: the sessions it opens end with it.
 */
const firstSessionWithoutOrigin = (key: ApiKeyRow, user: UserRow) =>
  key.origin === undefined &&
  !SESSION_CREDENTIAL_TYPES.includes(key.credentialType) &&
  key.expirationSeconds !== undefined &&
  key.createdAt === user.createdAt

/**
 * What a session opened by the caller's stamp (`stamp_login`) descends from, read in the login's
 * transaction: the caller's passkey, or its registered API key; a session key logging in again
 * (a refresh), or a sign-up's key with a lifetime, passes on its own origin, so its renewals end
 * with the credential that opened it. The caller's credential and the origin are read here, so a
 * login racing the removal of either conflicts with it: one of them runs again and sees the
 * other. A login key without a recorded origin (issued by an older instance during an upgrade)
 * opens no session: its user signs in again; a sign-up's first session key without one passes on
 * the passkeys registered with its user (`firstSessionWithoutOrigin`). An origin key that has
 * expired opens nothing either: a session a temporary key opened is not renewed past its lifetime,
 * and the session it opens is cut to end with it (`issueSession`, `secondsLeftOfOpeners`, from the
 * origin's `apiKeyIds`, which this reports).
 */
export async function sessionOriginOf(ctx: ActivityContext): Promise<SessionOrigin> {
  const { credential, userId } = ctx.caller
  if (credential.id.startsWith(ATTESTED_CREDENTIAL_PREFIX)) return {}
  if (credential.kind === 'WEBAUTHN') {
    const passkey = await ctx.tx.get('authenticators', credential.id)
    if (!passkey || passkey.userId !== userId) throw credentialGone()
    return { authenticatorIds: [passkey.id] }
  }
  const key = await ctx.tx.get('apiKeys', credential.id)
  if (!key || key.userId !== userId) throw credentialGone()
  let origin: SessionOrigin | undefined = key.origin
  if (!origin) {
    if (SESSION_CREDENTIAL_TYPES.includes(key.credentialType))
      throw sessionEnded('it was opened before sessions recorded their origin')
    const user = await ctx.tx.get('users', userId)
    if (!user) throw credentialGone()
    if (!firstSessionWithoutOrigin(key, user)) return { apiKeyIds: [key.id] }
    const passkeys = await ctx.tx.findBy('authenticators', 'userId', userId)
    origin = firstSessionOrigin(
      passkeys.filter((passkey) => passkey.createdAt === user.createdAt).map((passkey) => passkey.id),
    )
  }
  // Its removal ended the session with it; read again all the same, so a renewal never outlives it.
  for (const id of origin.authenticatorIds ?? []) {
    const passkey = await ctx.tx.get('authenticators', id)
    if (!passkey || passkey.userId !== userId) throw sessionEnded('the passkey that opened it was removed')
  }
  for (const id of origin.apiKeyIds ?? []) {
    const opener = await ctx.tx.get('apiKeys', id)
    if (!opener || opener.userId !== userId) throw sessionEnded('the key that opened it was deleted')
    if (isExpired(opener, ctx.now)) throw sessionEnded('the key that opened it has expired')
  }
  // A renewal: the new session belongs to the sign-in of the key that stamped it.
  return { ...origin, signIn: origin.signIn ?? key.id, renewedFrom: key.id }
}

/**
 * Ends the user's sessions that descend from a passkey or registered API key removed in this
 * transaction (`authenticatorIds`; `apiKeys`, the rows deleted: a login key among them is a logout
 * and opened nothing), so a lost device taken off the account ends what it opened (a sign-up's
 * first session too) and every renewal of it; and, on the removal of any passkey or registered
 * key, the login keys whose origin is not recorded (any of the user's credentials may have opened
 * them), and on the removal of any passkey, the sign-up's first session keys that record none
 * (`firstSessionWithoutOrigin`). Each live one ended gets its `LATCHKEY_SESSION_REVOKED` (`credential_removed`). Call it
 * after the removal.
 */
export async function endSessionsOpenedWith(
  ctx: ActivityContext,
  user: UserRow,
  removed: { authenticatorIds?: readonly string[]; apiKeys?: readonly ApiKeyRow[] },
): Promise<void> {
  const passkeys = new Set(removed.authenticatorIds)
  const deleted = new Set(removed.apiKeys?.map((key) => key.id))
  const registered = new Set(
    removed.apiKeys
      ?.filter((key) => !SESSION_CREDENTIAL_TYPES.includes(key.credentialType))
      .map((key) => key.id),
  )
  if (passkeys.size + registered.size === 0) return
  const ends = (key: ApiKeyRow) =>
    key.origin === undefined
      ? SESSION_CREDENTIAL_TYPES.includes(key.credentialType) ||
        (passkeys.size > 0 && firstSessionWithoutOrigin(key, user))
      : (key.origin.authenticatorIds ?? []).some((id) => passkeys.has(id)) ||
        (key.origin.apiKeyIds ?? []).some((id) => registered.has(id))
  let ended = 0
  for (const key of await ctx.tx.findBy('apiKeys', 'userId', user.id)) {
    if (deleted.has(key.id) || !ends(key)) continue
    await ctx.tx.delete('apiKeys', key.id)
    if (isExpired(key, ctx.now)) continue
    ended++
    await recordRevoked(ctx, user, key, 'credential_removed')
  }
  if (ended > 0) ctx.report('signin.sessions_revoked', { reason: 'credential_removed', count: ended })
}

/** Most keys of a deleted session profile one transaction of `endSessionsOfDeletedProfile` ends. */
export const DELETED_PROFILE_BATCH = 200

/** A session profile deleted (`latchkey_delete_session_profile`) whose sessions' keys are to go. */
export interface DeletedProfile {
  sessionProfileId: string
  /** The deletion's activity: named by each `LATCHKEY_SESSION_REVOKED`, and in its id. */
  activityId: string
  /** The profile's organization, and its parent (the deletion's organization, as it read it). */
  organizationId: string
  parentOrganizationId?: string
}

/**
 * Deletes, in `tx`, up to `limit` keys of the sessions issued under a deleted session profile
 * (the first by id, read through their index, migration 0028_session_profile_keys: in the
 * profile's organization and, for an app's profile, in each of its sub-organizations), each live
 * one with its `LATCHKEY_SESSION_REVOKED` (`deleted`, under an id of the deletion's activity and
 * the key, so a rerun writes the same event). Run after the deletion committed, one transaction a
 * batch (the limits wing's job), never in the deletion's own: a login under the profile adds a key
 * to the range read here, so a deletion reading every key of a busy profile was failed by every
 * such login that committed while it ran (SERIALIZABLE), past its reruns (503), while the profile
 * stayed. The sessions are refused from the deletion's commit on anyway (`authenticateApiKey`
 * finds their profile gone), so the keys going later changes nothing they may do. `more` says the
 * page was full: another batch may find more. A login that read the profile before the deletion
 * and commits after this batch read the range is a cycle on PostgreSQL (login, deletion, batch):
 * one of them runs again, so its key is found by a batch or never written.
 */
export async function endSessionsOfDeletedProfile(
  runtime: Runtime,
  tx: Transaction,
  deleted: DeletedProfile,
  limit = DELETED_PROFILE_BATCH,
): Promise<{ ended: number; more: boolean }> {
  const { sessionProfileId, activityId, organizationId, parentOrganizationId } = deleted
  const keys = await tx.pageBy('apiKeys', {
    field: 'sessionProfileId',
    value: sessionProfileId,
    by: 'id',
    limit,
  })
  const now = runtime.now()
  let ended = 0
  for (const key of keys) {
    await tx.delete('apiKeys', key.id)
    if (isExpired(key, now)) continue
    ended++
    await recordAppEvent(runtime, tx, {
      id: `${activityId}.revoked.${key.id}`,
      organization:
        key.organizationId === organizationId
          ? { id: organizationId, parentOrganizationId }
          : { id: key.organizationId },
      type: 'LATCHKEY_SESSION_REVOKED',
      data: { userId: key.userId, apiKeyId: key.id, reason: 'deleted', activityId },
    })
  }
  return { ended, more: keys.length === limit }
}

/**
 * The lock a user's sessions change under, per organization (`ServicePlugin.serializes`, the
 * sign-in wing): the logins that issue a session and `delete_api_keys`, which ends sign-ins
 * (`endSignIns`), run one at a time in every process instead of failing each other's commits, so
 * a stream of renewals cannot hold a logout off until it runs out of reruns.
 */
export const sessionLockOf = (organizationId: string): string => `sessions:${organizationId}`

/**
 * The activities that take `sessionLockOf`: those that issue a session, those that end sessions
 * (the deletion of keys, of passkeys, which ends what they opened, and of users), and the
 * approvals that run a waiting activity (a `delete_api_keys` an MFA policy held, let run by
 * `latchkey_satisfy_mfa` or `approve_activity`): the lock is named by the submitted path, so the
 * held one would otherwise run without it.
 */
export const SESSION_LOCK_PATHS: ReadonlySet<string> = new Set([
  'stamp_login',
  'otp_login',
  'oauth_login',
  'delete_api_keys',
  'delete_authenticators',
  'delete_users',
  'approve_activity',
  'latchkey_satisfy_mfa',
])

/**
 * The sign-in a key belongs to (`SessionOrigin.signIn`): the first key of its chain of renewals,
 * its own id for that first one (and for any key no renewal names: a registered key's sessions are
 * sign-ins of their own, ended with it by `endSessionsOpenedWith`; a sign-up's first session key
 * written without an origin is the first key of its renewals').
 */
export const signInOf = (key: ApiKeyRow): string => key.origin?.signIn ?? key.id

/**
 * A login under a session profile starts a sign-in of its own, whoever stamped it: a confined
 * session (an agent's, an embedded app's) ending itself (`isOwnLogout`, let through whatever its
 * scope) must not end the unconfined session that issued it. Issued by a session key, it records
 * that key's sign-in (`issuedBy`) and ends with it: the owner's logout ends the confined sessions
 * their sign-in issued, a thief's copy among them.
 */
export const ownSignIn = (origin: SessionOrigin): SessionOrigin => {
  const { signIn, renewedFrom: _, ...rest } = origin
  return signIn === undefined ? rest : { ...rest, issuedBy: signIn }
}

/**
 * Ends, with keys deleted in this transaction (`removed`, by `delete_api_keys`), every other key
 * of their sign-ins (`signInOf`: the renewals, before and after each), so a copy of a session key
 * renewed (`stamp_login` with it) before the owner signed out or revoked the session ends too.
 * The key the caller's own key was renewed from (`renewedFrom`: the kit's refresh deletes it) ends
 * alone; any other key, the caller's own (a logout) or another's (a device revoked from another,
 * or by a root user), ends its sign-in whole, the caller's key included when it is of that
 * sign-in, and the confined sessions the sign-in issued (`issuedBy`) with it; a key of the user that
 * is no session key (`isSessionKey`) ends only where it is listed. The caller's key
 * is read in this transaction, with the user's keys: a renewal racing
 * the logout either committed first (and is ended) or finds its stamping key gone
 * (`sessionOriginOf`). Each live session ended gets its `LATCHKEY_SESSION_REVOKED` (`logout` when
 * the caller signed its own sign-in out, else `deleted`).
 */
export async function endSignIns(
  ctx: ActivityContext,
  user: UserRow,
  removed: readonly ApiKeyRow[],
): Promise<void> {
  const { credential } = ctx.caller
  const callerKey =
    credential.kind !== 'API_KEY'
      ? undefined
      : (removed.find((key) => key.id === credential.id) ?? (await ctx.tx.get('apiKeys', credential.id)))
  const givenBack = callerKey?.userId === user.id ? callerKey.origin?.renewedFrom : undefined
  const ending = new Map<string, 'logout' | 'deleted'>()
  for (const key of removed) {
    if (key.id === givenBack) continue
    const signIn = signInOf(key)
    if (key.id === callerKey?.id) ending.set(signIn, 'logout')
    else if (!ending.has(signIn)) ending.set(signIn, 'deleted')
  }
  if (ending.size === 0) return
  const deleted = new Set(removed.map((key) => key.id))
  const counts = { logout: 0, deleted: 0 }
  for (const key of await ctx.tx.findBy('apiKeys', 'userId', user.id)) {
    // A durable key ends only where it is listed (and so decided on: the root quorum, a second
    // factor), never with a sign-in it heads: a key with a lifetime registered beside its user at
    // creation, taken for a sign-up's first session written without an origin, was deleted by the
    // logout of a session it opened, which runs without the quorum.
    if (!isSessionKey(key)) continue
    const issuer = key.origin?.issuedBy
    const reason = deleted.has(key.id)
      ? undefined
      : (ending.get(signInOf(key)) ?? (issuer === undefined ? undefined : ending.get(issuer)))
    if (reason === undefined) continue
    await ctx.tx.delete('apiKeys', key.id)
    if (!isLiveSession(key, ctx.now)) continue
    counts[reason]++
    await recordRevoked(ctx, user, key, reason)
  }
  for (const reason of ['logout', 'deleted'] as const)
    if (counts[reason] > 0) ctx.report('signin.sessions_revoked', { reason, count: counts[reason] })
}

/**
 * Refuses a change that leaves an organization's only root user with no way back in. Session
 * and login keys are short-lived and do not count; a durable key, a passkey, or a way to sign
 * in again (e-mail, phone, OAuth) does. Call it after the transaction's deletions.
 */
export async function assertRootKeepsAccess(
  ctx: ActivityContext,
  user: UserRow,
  field: string,
): Promise<void> {
  const { rootUserIds } = ctx.organization
  if (rootUserIds.length !== 1 || rootUserIds[0] !== user.id) return
  // An unverified contact routes no login, so it is no way back in.
  if (verifiedContact(user, 'email') || verifiedContact(user, 'phone')) return
  if ((await ctx.tx.findBy('oauthProviders', 'userId', user.id)).length > 0) return
  const durableKeys = (await ctx.tx.findBy('apiKeys', 'userId', user.id)).filter(
    (key) => !SESSION_CREDENTIAL_TYPES.includes(key.credentialType),
  )
  if (durableKeys.length + (await ctx.tx.findBy('authenticators', 'userId', user.id)).length > 0) return
  throw new FieldError({ field, message: 'this would leave the only root user without any credential' })
}
