import type {
  ApiKeyCurve,
  ApiKeyParams,
  AuthenticatorParams,
  AuthenticatorTransport,
  CredentialType,
} from '@latchkey/protocol'
import { bytesToHex } from '@noble/hashes/utils.js'
import { verifyRegistrationResponse } from '@simplewebauthn/server'
import { isoBase64URL } from '@simplewebauthn/server/helpers'
import { claimForAccount } from '../kernel/accountClaims.ts'
import { ConflictError, CredentialError, FieldError, NotFoundError } from '../kernel/base/errors.ts'
import { firstSighting, publicKeyMark } from '../kernel/passkeySightings.ts'
import type { ActivityContext } from '../kernel/registry.ts'
import {
  type ApiKeyRow,
  type AuthenticatorRow,
  apiKeyInOrganization,
  type UserRow,
} from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Store.ts'
import { accountHolds, passkeyValue } from './claimedValues.ts'
import { MAX_COSE_KEY_BYTES, MAX_CREDENTIAL_ID_CHARS } from './params.ts'
import { refuseOverLimit } from './resourceLimits.ts'
import { firstSessionOrigin, SESSION_CREDENTIAL_TYPES } from './sessions.ts'
import { callerVouchesForContacts } from './verifiedContact.ts'

export const CREDENTIAL_TYPE_OF_CURVE: Record<ApiKeyCurve, CredentialType> = {
  API_KEY_CURVE_P256: 'CREDENTIAL_TYPE_API_KEY_P256',
  API_KEY_CURVE_SECP256K1: 'CREDENTIAL_TYPE_API_KEY_SECP256K1',
  API_KEY_CURVE_ED25519: 'CREDENTIAL_TYPE_API_KEY_ED25519',
}

export async function findUser(
  reads: Reads,
  organizationId: string,
  userId: string,
  field: string,
): Promise<UserRow> {
  const user = await reads.get('users', userId)
  if (!user || user.organizationId !== organizationId)
    throw new NotFoundError({
      code: 'USER_NOT_FOUND',
      field,
      message: `user ${userId} not found in organization ${organizationId}`,
    })
  return user
}

/**
 * Checks API keys to register on a user and gives each its row (not written): a public key already
 * on the user is refused (ALREADY_EXISTS), naming `field[i].publicKey`, as is one past the user's
 * limit. `credentialType` defaults to the one of each key's curve.
 */
async function apiKeyRows(
  ctx: ActivityContext,
  user: UserRow,
  keys: ApiKeyParams[],
  { field, credentialType }: { field: string; credentialType?: CredentialType | undefined },
): Promise<ApiKeyRow[]> {
  const held = await ctx.tx.findBy('apiKeys', 'userId', user.id)
  // Login sessions' keys are not counted: they expire, and a login sweeps its user's long-expired ones.
  refuseOverLimit('apiKeysPerUser', {
    held: held.filter((key) => !SESSION_CREDENTIAL_TYPES.includes(key.credentialType)).length,
    adding: keys.length,
    owner: user.id,
    field,
  })
  const existing = new Set(held.map((key) => key.publicKey))
  return keys.map((key, index) => {
    if (existing.has(key.publicKey))
      throw new ConflictError({
        field: `${field}[${index}].publicKey`,
        message: `user ${user.id} already has this public key`,
      })
    existing.add(key.publicKey)
    return {
      id: ctx.newId(),
      organizationId: user.organizationId,
      userId: user.id,
      name: key.apiKeyName,
      publicKey: key.publicKey,
      keyInOrganization: apiKeyInOrganization(key.publicKey, user.organizationId),
      curve: key.curveType,
      credentialType: credentialType ?? CREDENTIAL_TYPE_OF_CURVE[key.curveType],
      ...(key.expirationSeconds !== undefined ? { expirationSeconds: key.expirationSeconds } : {}),
      // Anyone may register a wallet's public key: it signs in from the parent once it proved itself.
      ...(callerVouchesForContacts(ctx) ? {} : { unproven: true as const }),
      createdAt: ctx.now,
      updatedAt: ctx.now,
    }
  })
}

/**
 * Registers API keys on a user; a public key already on the user is refused (ALREADY_EXISTS),
 * naming `field[i].publicKey`. `credentialType` defaults to the one of each key's curve.
 */
export async function addApiKeys(
  ctx: ActivityContext,
  user: UserRow,
  keys: ApiKeyParams[],
  options: { field: string; credentialType?: CredentialType },
): Promise<string[]> {
  const rows = await apiKeyRows(ctx, user, keys, options)
  for (const row of rows) await ctx.tx.put('apiKeys', row)
  return rows.map((row) => row.id)
}

/**
 * A new user's API keys (`field.apiKeys`) and passkeys (`field.authenticators`), as a sign-up or
 * `create_users` registers them. The keys are checked first (a refusal names them before any
 * passkey) and written once the passkeys are registered, each once: a key with a lifetime (a
 * sign-up's first session key) bound to the passkeys registered with it (`firstSessionOrigin`: not
 * to the lifelong keys beside it), so that session and its renewals end when one of those passkeys
 * is removed (`ApiKeyRow.origin`), as a session a passkey's `stamp_login` opens does. With none (an
 * OTP, OAuth or key-only sign-up), nothing removable opened it.
 */
export async function addNewUserCredentials(
  ctx: ActivityContext,
  user: UserRow,
  params: { apiKeys: ApiKeyParams[]; authenticators: AuthenticatorParams[] },
  field: string,
): Promise<void> {
  const keys = await apiKeyRows(ctx, user, params.apiKeys, { field: `${field}.apiKeys` })
  const origin = firstSessionOrigin(
    await addAuthenticators(ctx, user, params.authenticators, `${field}.authenticators`),
  )
  for (const key of keys)
    await ctx.tx.put('apiKeys', key.expirationSeconds !== undefined ? { ...key, origin } : key)
}

const toBase64url = (bytes: Uint8Array) => {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

const transportName = (transport: AuthenticatorTransport) =>
  transport.replace('AUTHENTICATOR_TRANSPORT_', '').toLowerCase() as
    | 'ble'
    | 'internal'
    | 'nfc'
    | 'usb'
    | 'hybrid'

function originOf(clientDataJson: string): string {
  try {
    const origin = JSON.parse(new TextDecoder().decode(isoBase64URL.toBuffer(clientDataJson))).origin
    return typeof origin === 'string' ? origin : ''
  } catch {
    return ''
  }
}

/**
 * A passkey finds its account at login, so no two accounts of one top-level organization hold the
 * same credential id (kernel/accountClaims.ts): the authenticator picks the id ("none"
 * attestation), so anyone could otherwise register the id of another account's passkey, imported
 * or registered. The claim scope is a top-level organization and its sub-organizations together:
 * a passkey sign-in names the parent (`signInWithPasskey`, the published clients'
 * `loginWithPasskey`), and a copy in the parent itself, on a staff user, once took that sign-in
 * (pipeline/authenticate.ts, `passkeyFor`). So a registration is refused when another account of
 * the scope holds the id (the parent, or a sub-organization of it), and claimed under the parent,
 * by the sub-organization or the parent itself (a claim whose account no longer holds it is taken
 * over), so two registrations racing, in two sub-organizations or in the parent and one of them,
 * meet the claim's primary key.
 */
async function claimPasskey(
  ctx: ActivityContext,
  user: UserRow,
  {
    credentialId,
    registered,
    field,
  }: { credentialId: string; registered: AuthenticatorRow[]; field: string },
): Promise<void> {
  const parent =
    user.organizationId === ctx.organization.id
      ? (ctx.organization.parentOrganizationId ?? ctx.organization.id)
      : // A sub-organization made by this activity (sign-up), or one its parent acts in.
        ((await ctx.tx.get('organizations', user.organizationId))?.parentOrganizationId ??
        ctx.organization.id)
  const message = `credential ${credentialId} is already registered to another account of this organization`
  for (const row of registered)
    if (
      row.organizationId === parent ||
      (await ctx.tx.get('organizations', row.organizationId))?.parentOrganizationId === parent
    )
      throw new ConflictError({ field, message })
  const claimed = passkeyValue({ credentialId })
  await claimForAccount(
    ctx.tx,
    {
      organizationId: parent,
      ...claimed,
      subOrganizationId: user.organizationId,
      field,
      now: ctx.now,
      message,
    },
    async (held) => !(await accountHolds(ctx.tx, held.subOrganizationId, claimed)),
  )
}

/**
 * Verifies passkey attestations (registration responses) and registers them on a user. The
 * `challenge` is the one the client asked the authenticator to sign, as base64url or as text.
 */
export async function addAuthenticators(
  ctx: ActivityContext,
  user: UserRow,
  authenticators: AuthenticatorParams[],
  field: string,
): Promise<string[]> {
  const ids: string[] = []
  for (const [index, params] of authenticators.entries()) {
    const itemField = `${field}[${index}]`
    const { attestation } = params
    let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>
    try {
      verification = await verifyRegistrationResponse({
        response: {
          id: attestation.credentialId,
          rawId: attestation.credentialId,
          type: 'public-key',
          clientExtensionResults: {},
          response: {
            clientDataJSON: attestation.clientDataJson,
            attestationObject: attestation.attestationObject,
            transports: attestation.transports.map(transportName),
          },
        },
        expectedChallenge: (challenge) =>
          challenge === params.challenge ||
          challenge === toBase64url(new TextEncoder().encode(params.challenge)),
        expectedOrigin: ctx.runtime.options.webauthn.origins ?? originOf(attestation.clientDataJson),
        expectedRPID: ctx.runtime.options.webauthn.rpId,
        requireUserVerification: false,
      })
    } catch (error) {
      throw new CredentialError({
        code: 'ATTESTATION_INVALID',
        field: `${itemField}.attestation`,
        message: `passkey attestation rejected: ${(error as Error).message}`,
      })
    }
    if (!verification.verified)
      throw new CredentialError({
        code: 'ATTESTATION_INVALID',
        field: `${itemField}.attestation`,
        message: 'passkey attestation did not verify',
      })
    const info = verification.registrationInfo
    const credentialId = info.credential.id
    const credentialField = `${itemField}.attestation.credentialId`
    // The attestation's own credential id and public key, which the row is indexed by, whatever
    // the `credentialId` sent beside it says: past WebAuthn's limits, past an index entry's.
    if (credentialId.length > MAX_CREDENTIAL_ID_CHARS)
      throw new FieldError({
        field: `${itemField}.attestation.attestationObject`,
        reason: "holds a credential id longer than WebAuthn's 1,023 bytes",
      })
    if (info.credential.publicKey.length > MAX_COSE_KEY_BYTES)
      throw new FieldError({
        field: `${itemField}.attestation.attestationObject`,
        reason: `holds a credential public key longer than ${MAX_COSE_KEY_BYTES} bytes`,
      })
    const registered = await ctx.tx.findBy('authenticators', 'credentialId', credentialId)
    if (registered.some((row) => row.organizationId === user.organizationId))
      throw new ConflictError({
        field: credentialField,
        message: `credential ${credentialId} is already registered`,
      })
    await claimPasskey(ctx, user, { credentialId, registered, field: credentialField })
    // Asked whoever registers it, the operator too: it records the sighting.
    const firstShown = await firstSighting(
      ctx.tx,
      [credentialId, publicKeyMark(bytesToHex(info.credential.publicKey))],
      { activityId: ctx.activityId, now: ctx.now },
    )
    const id = ctx.newId()
    await ctx.tx.put('authenticators', {
      id,
      organizationId: user.organizationId,
      userId: user.id,
      name: params.authenticatorName,
      credentialId,
      cosePublicKey: toBase64url(info.credential.publicKey),
      publicKeyHex: bytesToHex(info.credential.publicKey),
      counter: info.credential.counter,
      aaguid: info.aaguid,
      model: '',
      attestationType: info.fmt,
      transports: attestation.transports,
      // A "none" attestation proves nothing about who holds the key: a passkey anyone but the
      // operator registered signs in from the parent once it proved itself (pipeline/authenticate.ts),
      // unless this is the first registration that ever showed it (its holder's own: a copy is
      // made of a passkey the service has shown, kernel/passkeySightings.ts).
      ...(callerVouchesForContacts(ctx) || firstShown ? {} : { unproven: true as const }),
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    ids.push(id)
  }
  return ids
}
