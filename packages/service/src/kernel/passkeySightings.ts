// Where the service first saw each passkey. A "none" attestation signs nothing, so a passkey's
// credential id and public key are all it takes to register it, and anyone who read them (in the
// record of a registration waiting for a vote or one that failed, in `list_users` before a
// removal) can register a copy. A copy can only be made of a passkey the service has shown
// somewhere, so the registration that first shows one (its activity's record, waiting or not)
// is its holder's own: the passkey is made on the holder's device in that very ceremony. That
// registration counts as proven (`AuthenticatorRow.unproven` unset, domain/users.ts), so the
// published clients' passkey sign-up, which never stamps with the new passkey naming its account,
// signs in again from the parent organization later. Every later registration of the same
// credential id or public key, anywhere, is a possible copy and stays unproven until the passkey
// proves itself (pipeline/authenticate.ts).
//
// One row per credential id and per public key ever shown (`passkeySightings`), its id derived
// from that alone (every parent organization's: one relying party), never deleted. Written in the
// transaction that writes an activity record showing the passkey (`sightPasskeys`, from
// `putActivity`), so no reader can see a record of it before the row exists, naming the first
// activity that showed it; two registrations at once meet on the row (PostgreSQL fails one, and
// it reruns). Rows of the passkeys registered or shown before these rows existed are written by
// migration 0025_passkey_sightings.
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { decodeAttestationObject, isoBase64URL, parseAuthenticatorData } from '@simplewebauthn/server/helpers'
import type { Transaction } from './store/Transaction.ts'

/** The id of a sighting of a credential id (without padding) or a public key (`publicKeyMark`). */
export const passkeySightingId = (shown: string): string =>
  bytesToHex(sha256(utf8ToBytes(`passkey\n${shown.replace(/=+$/, '')}`))).slice(0, 40)

/**
 * What an activity's intent shows of the passkey registrations at `paths`
 * (`ActivityHandler.passkeyParameters`: `'authenticators[]'`, `'users[].authenticators[]'`): each
 * item's `credentialId` or `attestation.credentialId` as sent, its `cosePublicKey` (an import's),
 * and the credential id and public key inside its attestation object (what a reader of the record
 * learns either way): credential ids without padding, public keys as `publicKeyMark` names them.
 */
export function passkeysShownIn(intent: Record<string, unknown>, paths: readonly string[]): string[] {
  const ids = new Set<string>()
  for (const path of paths)
    for (const item of itemsAt(intent, path.split('.'))) {
      if (!item || typeof item !== 'object') continue
      const record = item as Record<string, unknown>
      const attestation = record.attestation as Record<string, unknown> | undefined
      for (const id of [record.credentialId, attestation?.credentialId])
        if (typeof id === 'string' && id !== '') ids.add(id.replace(/=+$/, ''))
      for (const shown of shownInAttestation(attestation?.attestationObject)) ids.add(shown)
      // An import names the public key itself (base64url COSE key).
      const cose = coseKeyHex(record.cosePublicKey)
      if (cose) ids.add(publicKeyMark(cose))
    }
  return [...ids]
}

/**
 * A passkey's public key (its COSE key, hex) as a sighting names it: a registration of a credential
 * id never shown that carries a public key shown before (someone else's passkey's, under an id of
 * the registrant's making) is no first registration either, so the account lookups by public key
 * never name it while it is unproven.
 */
export const publicKeyMark = (coseKeyHex: string): string => `cose:${coseKeyHex.toLowerCase()}`

/** The items a path (`name[]` through each item of the list `name`) leads to in `value`. */
function itemsAt(value: unknown, steps: readonly string[]): unknown[] {
  if (steps.length === 0) return [value]
  if (!value || typeof value !== 'object' || Array.isArray(value)) return []
  const [step, ...rest] = steps as [string, ...string[]]
  const through = step.endsWith('[]')
  const inner = (value as Record<string, unknown>)[through ? step.slice(0, -2) : step]
  if (!through) return itemsAt(inner, rest)
  return Array.isArray(inner) ? inner.flatMap((item) => itemsAt(item, rest)) : []
}

/** A base64url COSE key as hex, or undefined if `value` is none. */
function coseKeyHex(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined
  try {
    return bytesToHex(isoBase64URL.toBuffer(value))
  } catch {
    return undefined
  }
}

/** The credential id and public key mark a base64url attestation object registers, if any. */
function shownInAttestation(attestationObject: unknown): string[] {
  if (typeof attestationObject !== 'string' || attestationObject === '') return []
  try {
    const authData = decodeAttestationObject(isoBase64URL.toBuffer(attestationObject)).get('authData')
    const { credentialID, credentialPublicKey } = parseAuthenticatorData(authData)
    return [
      ...(credentialID ? [isoBase64URL.fromBuffer(credentialID)] : []),
      ...(credentialPublicKey ? [publicKeyMark(bytesToHex(credentialPublicKey))] : []),
    ]
  } catch {
    return []
  }
}

/**
 * Records in `tx` that `activityId`'s record shows each of `shown` (`passkeysShownIn`), where no record showed
 * it before: a sighting names the first activity that showed it, so a copy registered later, even
 * one made while the holder's registration waited for a vote, leaves that registration the first.
 * `blind` writes without reading, as a snapshot run must (an import: `createsOnly`), renaming a
 * sighting already recorded: the registration that showed it first then finds another activity
 * named and stays unproven, the safe side.
 */
export async function sightPasskeys(
  tx: Transaction,
  shown: readonly string[],
  { activityId, now, blind = false }: { activityId: string; now: number; blind?: boolean },
): Promise<void> {
  for (const mark of shown) {
    const id = passkeySightingId(mark)
    if (!blind && (await tx.get('passkeySightings', id))) continue
    await tx.put('passkeySightings', { id, activityId, createdAt: now, updatedAt: now })
  }
}

/**
 * Whether the registration `activityId` makes of a passkey (its credential id and its public
 * key's `publicKeyMark`) is the first the service has seen of it: no record showed either before,
 * or only this activity's own (it waited for a vote or a second factor). Records the sightings in
 * `tx` where there were none.
 */
export async function firstSighting(
  tx: Transaction,
  shown: readonly string[],
  { activityId, now }: { activityId: string; now: number },
): Promise<boolean> {
  let first = true
  for (const mark of shown) {
    const seen = await tx.get('passkeySightings', passkeySightingId(mark))
    if (seen) first &&= seen.activityId === activityId
    else await sightPasskeys(tx, [mark], { activityId, now, blind: true })
  }
  return first
}
