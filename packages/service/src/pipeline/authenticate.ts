import {
  type ApiKeyCurve,
  type ApiKeyStamp,
  decodeApiKeyStamp,
  SESSION_HEADER,
  SESSION_KEY_MESSAGES,
  type SessionClaims,
  type SignatureScheme,
  STAMP_HEADER,
  WEBAUTHN_STAMP_HEADER,
  type WebAuthnStamp,
} from '@latchkey/protocol'
import { webAuthnChallengeOf } from '@latchkey/protocol/webAuthnChallengeOf'
import { p256 } from '@noble/curves/nist.js'
import { hexToBytes } from '@noble/hashes/utils.js'
import { verifyAuthenticationResponse } from '@simplewebauthn/server'
import { recordAppEvent } from '../kernel/appEvents.ts'
import { AuthenticationError, PermissionError } from '../kernel/base/errors.ts'
import { verifyApiKeyStamp, verifyJwt } from '../kernel/crypto/index.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { Caller } from '../kernel/registry.ts'
import {
  type ApiKeyRow,
  type AuthenticatorRow,
  apiKeyInOrganization,
  isExpired,
} from '../kernel/store/model.ts'
import type { Reads, Transaction } from '../kernel/store/Store.ts'
import { onlyPasskeyOfAccount } from './passkeySignIn.ts'
import { onlyKeyHoldersUnder, registeredHoldersUnder } from './walletKeys.ts'

const SCHEMES_OF_CURVE: Record<ApiKeyCurve, SignatureScheme[]> = {
  API_KEY_CURVE_P256: ['SIGNATURE_SCHEME_TK_API_P256'],
  API_KEY_CURVE_SECP256K1: ['SIGNATURE_SCHEME_TK_API_SECP256K1', 'SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191'],
  API_KEY_CURVE_ED25519: ['SIGNATURE_SCHEME_TK_API_ED25519'],
}

/**
 * The API key a stamp names, for a request to `organizationId`: the organization's own, else its
 * parent's, else one of any other organization's (authorization then refuses what it may not do).
 * Each is one row, read by `keyInOrganization` or, for the last, one row by public key: a key held
 * in many organizations (a back end's key in each of its users' sub-organizations) costs a request
 * one row, never one per organization. Called once the stamp's signature has verified, so only the
 * key's holder gets this far.
 */
async function apiKeyFor(
  runtime: Runtime,
  reads: Reads,
  stamped: StampedKey,
  organizationId: string | undefined,
): Promise<{ key: ApiKeyRow; proves: boolean } | undefined> {
  const { publicKey } = stamped
  if (organizationId !== undefined) {
    const inOrganization = async (id: string) =>
      (await reads.findBy('apiKeys', 'keyInOrganization', apiKeyInOrganization(publicKey, id)))[0]
    const own = await inOrganization(organizationId)
    // A stamp naming the key's own organization proves its holder holds it there.
    if (own) return { key: own, proves: true }
    const parentId = (await reads.get('organizations', organizationId))?.parentOrganizationId
    const parent = parentId === undefined ? undefined : await inOrganization(parentId)
    if (parent) return { key: parent, proves: false }
    const signIn = await signInKey(runtime, stamped, organizationId)
    if (signIn) return signIn
  }
  // The first holder in id (creation) order, as every holder's list used to be read.
  const [first] = await runtime.store.pageBy('apiKeys', {
    field: 'publicKey',
    value: publicKey,
    by: 'id',
    limit: 1,
  })
  return first && { key: first, proves: false }
}

/** The key a stamp names and the scheme it signed with. */
interface StampedKey {
  publicKey: string
  scheme: SignatureScheme
}

/**
 * The account a stamp naming the parent organization signs in to (a wallet's `stamp_login`, before
 * the client knows its sub-organization), among the parent's sub-organizations holding the key as
 * a registered key on the stamp's curve (walletKeys.ts): the first, by id, where the key proved
 * itself; else the newest account only the key gets into (a wallet sign-up's), which this login
 * proves. A registration anyone else made routes nothing: the stamp is refused rather than land
 * in an account someone else controls. The holders are read through the index of registered keys,
 * proven apart from unproven and under the parent only (`registeredHoldersUnder`), a bounded
 * number of pages: copies of a wallet's public key registered before its account, in any number
 * and any organization, neither hide that account nor cost more reads, and once the account
 * proved itself, nor do copies registered after it. (Past those pages of copies registered after
 * a wallet sign-up and before its first sign-in, that sign-in is refused until the holder signs in
 * naming its organization.)
 */
async function signInKey(
  runtime: Runtime,
  { publicKey, scheme }: StampedKey,
  parentId: string,
): Promise<{ key: ApiKeyRow; proves: boolean } | undefined> {
  const { store } = runtime
  // Keys of another curve naming the same bytes neither route nor shadow the sign-in.
  const onCurve = (key: ApiKeyRow) => SCHEMES_OF_CURVE[key.curve].includes(scheme)
  for await (const key of registeredHoldersUnder(store, publicKey, parentId, true))
    if (onCurve(key)) return { key, proves: false }
  let under = false
  const seen = () => {
    under = true
  }
  for await (const key of onlyKeyHoldersUnder(store, publicKey, parentId, { keep: onCurve, seen }))
    return { key, proves: true }
  if (!under) return undefined
  throw new AuthenticationError({
    code: 'PUBLIC_KEY_NOT_FOUND',
    message:
      'this key has not signed in to an account of this organization yet: sign up, or sign in naming your organization',
  })
}

/** Marks an API key proven (`ApiKeyRow.unproven`): its holder stamped with it where it is registered. */
async function markProven(runtime: Runtime, key: ApiKeyRow): Promise<void> {
  await runtime.store.transaction(async (tx) => {
    const current = await tx.get('apiKeys', key.id)
    if (!current?.unproven) return
    const { unproven: _, ...row } = current
    await tx.put('apiKeys', { ...row, updatedAt: runtime.now() })
  })
}

async function callerOf(
  reads: Reads,
  userId: string,
  credential: Caller['credential'],
  readOnly = false,
): Promise<Caller> {
  const user = await reads.get('users', userId)
  if (!user)
    throw new AuthenticationError({ code: 'PUBLIC_KEY_NOT_FOUND', message: SESSION_KEY_MESSAGES.notFound })
  return { userId, organizationId: user.organizationId, credential, readOnly }
}

const webCryptoKeys = new Map<string, Promise<CryptoKey>>()

/**
 * P-256 stamps verified natively (WebCrypto is far faster than pure-JS verification). Its "no"
 * is final: a signature that does not verify, or does not parse, is refused here. Only a runtime
 * without WebCrypto answers undefined, and the caller verifies in JS; falling back on every bad
 * signature would let anyone who knows a public key make each request cost a pure-JS verification.
 */
export async function verifyP256WithWebCrypto(
  publicKey: string,
  signatureHex: string,
  body: Uint8Array,
): Promise<boolean | undefined> {
  const subtle = globalThis.crypto?.subtle
  if (!subtle) return undefined
  try {
    let key = webCryptoKeys.get(publicKey)
    if (!key) {
      const uncompressed = p256.Point.fromBytes(hexToBytes(publicKey)).toBytes(false)
      key = subtle.importKey('raw', uncompressed, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify'])
      if (webCryptoKeys.size >= 1000) webCryptoKeys.clear()
      webCryptoKeys.set(publicKey, key)
    }
    const signature = p256.Signature.fromBytes(hexToBytes(signatureHex), 'der').toBytes('compact')
    return await subtle.verify(
      { name: 'ECDSA', hash: 'SHA-256' },
      await key,
      signature,
      body as Uint8Array<ArrayBuffer>,
    )
  } catch {
    return false
  }
}

async function authenticateApiKey(
  runtime: Runtime,
  header: string,
  { bytes, organizationId, reads = runtime.store }: StampedRequest,
): Promise<Caller> {
  let stamp: ApiKeyStamp
  try {
    stamp = decodeApiKeyStamp(header)
  } catch (error) {
    throw new AuthenticationError({
      code: 'STAMP_MALFORMED',
      message: `${STAMP_HEADER} is malformed: ${(error as Error).message}`,
    })
  }
  const publicKey = stamp.publicKey.toLowerCase()
  // The signature first, from the stamp alone (its scheme names the curve): a request that does
  // not prove it holds the key reads nothing about it, so knowing a public key buys no reads of
  // its holders, and the answer does not tell whether a key is registered anywhere.
  let valid = false
  try {
    valid =
      (stamp.scheme === 'SIGNATURE_SCHEME_TK_API_P256'
        ? await (runtime.options.verifyP256 ?? verifyP256WithWebCrypto)(publicKey, stamp.signature, bytes)
        : undefined) ?? verifyApiKeyStamp({ ...stamp, publicKey }, bytes)
  } catch {
    valid = false
  }
  if (!valid)
    throw new AuthenticationError({
      code: 'STAMP_INVALID',
      message: 'stamp signature does not match the request body',
    })
  const found = await apiKeyFor(runtime, reads, { publicKey, scheme: stamp.scheme }, organizationId)
  if (!found)
    throw new AuthenticationError({ code: 'PUBLIC_KEY_NOT_FOUND', message: SESSION_KEY_MESSAGES.notFound })
  const { key } = found
  if (!SCHEMES_OF_CURVE[key.curve].includes(stamp.scheme))
    throw new AuthenticationError({
      code: 'STAMP_INVALID',
      message: `stamp scheme ${stamp.scheme} does not match the key's curve ${key.curve}`,
    })
  // A session of a deleted session profile ended with it, from the deletion's commit on, here as
  // for a deleted key (the kit signs out): its key goes after that commit, a batch at a time
  // (`limits.end_profile_sessions`), and one an older instance wrote without the column that job
  // reads by is never found by it. One row by id, for a profiled key only; before the expiry, so
  // the answer is a deleted key's whether or not the job has deleted it yet.
  if (key.sessionProfileId !== undefined && !(await reads.get('sessionProfiles', key.sessionProfileId)))
    throw new AuthenticationError({ code: 'PUBLIC_KEY_NOT_FOUND', message: SESSION_KEY_MESSAGES.notFound })
  if (isExpired(key, runtime.now()))
    throw new AuthenticationError({ code: 'API_KEY_EXPIRED', message: SESSION_KEY_MESSAGES.expired })
  if (key.unproven && found.proves) await markProven(runtime, key)
  return callerOf(reads, key.userId, {
    kind: 'API_KEY',
    id: key.id,
    publicKey,
    scheme: stamp.scheme,
    signature: stamp.signature,
    ...(key.sessionProfileId !== undefined ? { sessionProfileId: key.sessionProfileId } : {}),
  })
}

function parseWebAuthnStamp(header: string): WebAuthnStamp {
  try {
    const value = JSON.parse(header) as Partial<WebAuthnStamp>
    for (const field of ['authenticatorData', 'clientDataJson', 'credentialId', 'signature'] as const)
      if (typeof value[field] !== 'string' || !value[field]) throw new Error(`${field} is missing`)
    return value as WebAuthnStamp
  } catch (error) {
    throw new AuthenticationError({
      code: 'STAMP_MALFORMED',
      message: `${WEBAUTHN_STAMP_HEADER} is malformed: ${(error as Error).message}`,
    })
  }
}

const base64url = (text: string) => {
  let binary = ''
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

/** Origin in a base64url clientDataJSON, for the dev service that accepts every origin. */
function originOf(clientDataJson: string): string {
  try {
    const text = atob(clientDataJson.replace(/-/g, '+').replace(/_/g, '/'))
    const origin = (JSON.parse(text) as { origin?: unknown }).origin
    return typeof origin === 'string' ? origin : ''
  } catch {
    return ''
  }
}

/**
 * The passkey a stamp names, for a request to `organizationId` (of several rows with one credential
 * id, the one in that organization, then its parent's), and whether the stamp proves its holder
 * holds it there (it names the passkey's own organization, a sub-organization: a stamp naming a
 * top-level organization is also every sign-in from it, so it proves no unproven row there, and
 * such a row routes nothing). A stamp naming the parent of the
 * accounts holding the credential id (`signInWithPasskey`, before the client knows its
 * sub-organization) takes, among them, one where the passkey proved itself, else the newest account
 * only the passkey gets into (a passkey sign-up's, which this sign-in proves); a registration anyone
 * else made routes nothing: the stamp is refused (once it verified) rather than land in an account
 * someone else controls (a "none" attestation proves nothing about who holds the key).
 */
async function passkeyFor(
  reads: Reads,
  rows: AuthenticatorRow[],
  organizationId: string | undefined,
): Promise<{
  authenticator: AuthenticatorRow | undefined
  proves: boolean
  onlyWayIn?: true
  refused?: true
}> {
  if (organizationId !== undefined) {
    const own = rows.find((row) => row.organizationId === organizationId)
    const parentId = (await reads.get('organizations', organizationId))?.parentOrganizationId
    if (own && parentId !== undefined) return { authenticator: own, proves: true }
    const parent = rows.find((row) => row.organizationId === parentId)
    if (parent) return { authenticator: parent, proves: false }
    // The rows in the accounts under a top-level organization (none under a sub-organization).
    const under: AuthenticatorRow[] = []
    if (parentId === undefined)
      for (const row of rows)
        if ((await reads.get('organizations', row.organizationId))?.parentOrganizationId === organizationId)
          under.push(row)
    // A row of a top-level organization registered after an account under it registered the same
    // credential id is a copy of that passkey (one is made in the ceremony that first registers it),
    // marked or not: rows written before the parent and its accounts were one claim scope carry no
    // mark, and such a copy (a staff user's) took every sign-in from the parent.
    const copy = own !== undefined && under.some((row) => row.createdAt < own.createdAt)
    if (own && !own.unproven && !copy) return { authenticator: own, proves: true }
    // Here `own`, if any, is an unproven row or a copy in a top-level organization: a stamp naming
    // it is also every sign-in from the parent, so it proves nothing about who registered the row.
    // Such a copy (a staff user's, of a person's passkey) neither takes the sign-in from the
    // accounts under it nor, with none, takes it itself.
    if (under.length > 0) {
      const proven = under.find((row) => !row.unproven)
      if (proven) return { authenticator: proven, proves: false }
      for (const row of [...under].sort((a, b) => b.createdAt - a.createdAt))
        if (await onlyPasskeyOfAccount(reads, row))
          return { authenticator: row, proves: true, onlyWayIn: true }
      // Refused once the stamp verified, so a credential id alone learns nothing of its registrations.
      return { authenticator: under[under.length - 1], proves: false, refused: true }
    }
    if (own) return { authenticator: own, proves: false, refused: true }
  }
  return { authenticator: rows[0], proves: false }
}

/**
 * Ends the session keys registered beside `passkey` (`ApiKeyRow.origin` names it: a sign-up's first
 * session keys) as it proves itself in an account only it gets into, and records in `tx` one
 * `LATCHKEY_SESSION_REVOKED` (`passkey_took_over`) for each live one. A sign-in has no activity, so
 * the event names the passkey, and its id is the passkey's and the key's: two sign-ins proving the
 * passkey at once (on one instance or two) conflict on these rows, and the one that runs again
 * finds the passkey proven and ends nothing.
 */
async function endSessionsBesidePasskey(
  runtime: Runtime,
  tx: Transaction,
  passkey: AuthenticatorRow,
): Promise<number> {
  const now = runtime.now()
  let ended = 0
  for (const key of await tx.findBy('apiKeys', 'organizationId', passkey.organizationId)) {
    if (!key.origin?.authenticatorIds?.includes(passkey.id)) continue
    await tx.delete('apiKeys', key.id)
    if (isExpired(key, now)) continue
    ended++
    await recordAppEvent(runtime, tx, {
      id: `${passkey.id}.took_over.${key.id}`,
      organization: { id: passkey.organizationId },
      type: 'LATCHKEY_SESSION_REVOKED',
      data: {
        userId: key.userId,
        apiKeyId: key.id,
        reason: 'passkey_took_over',
        authenticatorId: passkey.id,
      },
    })
  }
  return ended
}

async function authenticateWebAuthn(
  runtime: Runtime,
  header: string,
  { bytes, organizationId }: StampedRequest,
): Promise<Caller> {
  const stamp = parseWebAuthnStamp(header)
  const { authenticator, proves, onlyWayIn, refused } = await passkeyFor(
    runtime.store,
    await runtime.store.findBy('authenticators', 'credentialId', stamp.credentialId.replace(/=+$/, '')),
    organizationId,
  )
  if (!authenticator)
    throw new AuthenticationError({ code: 'PUBLIC_KEY_NOT_FOUND', message: SESSION_KEY_MESSAGES.notFound })
  const challenge = base64url(webAuthnChallengeOf(bytes))
  let verification: Awaited<ReturnType<typeof verifyAuthenticationResponse>>
  try {
    verification = await verifyAuthenticationResponse({
      response: {
        id: authenticator.credentialId,
        rawId: authenticator.credentialId,
        type: 'public-key',
        clientExtensionResults: {},
        response: {
          authenticatorData: stamp.authenticatorData,
          clientDataJSON: stamp.clientDataJson,
          signature: stamp.signature,
        },
      },
      expectedChallenge: challenge,
      expectedOrigin: runtime.options.webauthn.origins ?? originOf(stamp.clientDataJson),
      expectedRPID: runtime.options.webauthn.rpId,
      requireUserVerification: false,
      credential: {
        id: authenticator.credentialId,
        publicKey: base64urlToBytes(authenticator.cosePublicKey),
        counter: authenticator.counter,
      },
    })
  } catch (error) {
    throw new AuthenticationError({
      code: 'WEBAUTHN_INVALID',
      message: `passkey stamp rejected: ${(error as Error).message}`,
    })
  }
  if (!verification.verified)
    throw new AuthenticationError({ code: 'WEBAUTHN_INVALID', message: 'passkey stamp did not verify' })
  if (refused)
    throw new AuthenticationError({
      code: 'PUBLIC_KEY_NOT_FOUND',
      message:
        'this passkey has not signed in to an account of this organization yet: sign in naming your organization',
    })
  const counter = verification.authenticationInfo.newCounter
  const proven = authenticator.unproven && proves
  // Proved in an account only it gets into, whether the stamp named the parent (`onlyWayIn`) or the
  // account itself (a client that looked it up first): whoever signed that account up may not hold
  // the passkey, so the session keys they registered beside it end here.
  const takesOver = proven && (onlyWayIn || (await onlyPasskeyOfAccount(runtime.store, authenticator)))
  if (counter !== authenticator.counter || proven) {
    const ended = await runtime.store.transaction(async (tx) => {
      const current = await tx.get('authenticators', authenticator.id)
      if (!current) return 0
      // Signed in to an account only it gets into: the sessions whoever signed it up registered
      // beside it end here, so nobody but the passkey's holder keeps a way in. Read again here: a
      // sign-in that proved it first (on this instance or another) ended them, and the sessions
      // the passkey opened since descend from it too.
      const ended = takesOver && current.unproven ? await endSessionsBesidePasskey(runtime, tx, current) : 0
      const { unproven, ...row } = current
      await tx.put('authenticators', {
        ...row,
        ...(unproven && !proven ? { unproven } : {}),
        counter,
        updatedAt: runtime.now(),
      })
      return ended
    })
    // Counted once committed (a rerun of the transaction counts once).
    if (ended > 0) runtime.emit('signin.sessions_revoked', { reason: 'passkey_took_over', count: ended })
  }
  return callerOf(runtime.store, authenticator.userId, {
    kind: 'WEBAUTHN',
    id: authenticator.id,
    publicKey: authenticator.publicKeyHex,
    scheme: 'SIGNATURE_SCHEME_TK_API_WEBAUTHN',
    signature: stamp.signature,
  })
}

async function authenticateSession(runtime: Runtime, token: string): Promise<Caller> {
  let claims: SessionClaims
  try {
    claims = verifyJwt(
      token.trim(),
      hexToBytes(runtime.sessionPublicKey),
      Math.floor(runtime.now() / 1000),
    ) as SessionClaims
  } catch (error) {
    const expired = /expir/i.test((error as Error).message)
    throw new AuthenticationError({
      code: expired ? 'SESSION_EXPIRED' : 'SESSION_INVALID',
      message: expired ? 'read-only session has expired' : `${SESSION_HEADER} is not a valid session`,
    })
  }
  if (claims.session_type !== 'SESSION_TYPE_READ_ONLY')
    throw new AuthenticationError({
      code: 'SESSION_INVALID',
      message: `${SESSION_HEADER} accepts read-only sessions only`,
    })
  // Every read-only session names the key or passkey that made it, and ends with it (below). One
  // naming neither (only the session signing key could make it: the service issues none) would be
  // bound to nothing and outlive every logout.
  if (claims.api_key_id === undefined && claims.authenticator_id === undefined)
    throw new AuthenticationError({
      code: 'SESSION_INVALID',
      message: `${SESSION_HEADER} names no key or passkey that made it`,
    })
  const caller = await callerOf(runtime.store, claims.user_id, {
    kind: 'READ_ONLY_SESSION',
    id: claims.user_id,
    publicKey: '',
    scheme: 'SESSION',
    signature: '',
  })
  if (caller.organizationId !== claims.organization_id)
    throw new AuthenticationError({ code: 'SESSION_INVALID', message: 'session is stale' })
  // Made by an API key (a login session's): it ends with that key, deleted (a logout) or expired.
  if (claims.api_key_id !== undefined) {
    const key = await runtime.store.get('apiKeys', claims.api_key_id)
    if (!key || key.userId !== claims.user_id || isExpired(key, runtime.now()))
      throw new AuthenticationError({
        code: 'SESSION_EXPIRED',
        message: 'read-only session has ended: the session that made it was logged out or expired',
      })
  }
  // Made by a passkey: it ends when the passkey is removed (a lost device taken off the account).
  if (claims.authenticator_id !== undefined) {
    const passkey = await runtime.store.get('authenticators', claims.authenticator_id)
    if (!passkey || passkey.userId !== claims.user_id)
      throw new AuthenticationError({
        code: 'SESSION_EXPIRED',
        message: 'read-only session has ended: the passkey that made it was removed',
      })
  }
  return { ...caller, readOnly: true }
}

export function base64urlToBytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, ''))
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}

/** A stamped request as authentication sees it. */
export interface StampedRequest {
  headers: Headers
  /** The raw body, as stamped. */
  bytes: Uint8Array
  /** Activities must be stamped; queries also accept a read-only session. */
  route: 'submit' | 'query'
  /** The organization the body names: of credentials sharing a public key, the one there wins. */
  organizationId: string | undefined
  /** The request's prefetched reads (`requestReads`); the store when absent. */
  reads?: Reads
}

/**
 * Establishes the caller from the request's stamp: `X-Stamp` (API key, all four schemes, over the
 * raw body bytes), `X-Stamp-WebAuthn` (passkey assertion whose challenge is the body's hash),
 * or, on query routes only, `X-Session` (read-only session JWT). An API key's credential, user and
 * the target organization are read through `request.reads`.
 */
export async function authenticate(runtime: Runtime, request: StampedRequest): Promise<Caller> {
  const { headers, bytes, route, organizationId } = request
  const apiStamp = headers.get(STAMP_HEADER)
  if (apiStamp) return authenticateApiKey(runtime, apiStamp, request)
  const webauthnStamp = headers.get(WEBAUTHN_STAMP_HEADER)
  if (webauthnStamp) return authenticateWebAuthn(runtime, webauthnStamp, request)
  // Plugins' own stamps (the sign-in wing's X-Stamp-Attested: a key a token vouches for).
  if (route === 'submit')
    for (const [name, verify] of runtime.options.stampVerifiers ?? []) {
      const stamp = headers.get(name)
      if (stamp) return verify(runtime, stamp, bytes, organizationId)
    }
  const session = headers.get(SESSION_HEADER)
  if (session) {
    if (route === 'submit')
      throw new PermissionError({
        code: 'READ_ONLY_SESSION',
        message: 'a read-only session cannot submit activities; stamp the request',
      })
    return authenticateSession(runtime, session)
  }
  throw new AuthenticationError({
    code: 'STAMP_MISSING',
    message: `request needs an ${STAMP_HEADER} or ${WEBAUTHN_STAMP_HEADER} header${route === 'query' ? ` (or ${SESSION_HEADER})` : ''}`,
  })
}
