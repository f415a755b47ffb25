// Where the service first saw each passkey. A "none" attestation signs nothing, so a passkey's
// credential id and public key are all it takes to register it, and anyone who read them (in the
// record of a registration waiting for a vote or one that failed, in `list_users` before a
// removal) can register a copy. A copy can only be made of a passkey the service has shown
// somewhere, so the registration that first shows one (its activity's record, waiting or not)
// is its holder's own: the passkey is made on the holder's device in that very ceremony. That
// registration counts as proven (`AuthenticatorRow.unproven` unset, domain/users.ts), so the
// published clients' passkey sign-up, which never stamps with the new passkey naming its account,
// signs in again from the parent organization later. Every later registration of the same
// credential id, anywhere, is a possible copy and stays unproven until the passkey proves itself
// (pipeline/authenticate.ts).
//
// One row per credential id ever shown (`passkeySightings`), its id derived from the credential id
// alone (every parent organization's: one relying party), never deleted. Written in the
// transaction that writes an activity record showing the passkey (`sightPasskeys`, from
// `putActivity`), so no reader can see a record of it before the row exists, naming the first
// activity that showed it; two registrations at once meet on the row (PostgreSQL fails one, and
// it reruns). Rows of the passkeys registered or
// shown before these rows existed are written by migration 0025_passkey_sightings.
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { decodeAttestationObject, isoBase64URL, parseAuthenticatorData } from '@simplewebauthn/server/helpers'
import type { Transaction } from './store/Transaction.ts'

/** The id of a credential id's sighting: derived from the credential id without padding. */
export const passkeySightingId = (credentialId: string): string =>
  bytesToHex(sha256(utf8ToBytes(`passkey\n${credentialId.replace(/=+$/, '')}`))).slice(0, 40)

/**
 * The credential ids an activity's intent shows in the passkey registrations at `paths`
 * (`ActivityHandler.passkeyParameters`: `'authenticators[]'`, `'users[].authenticators[]'`): each
 * item's `credentialId` or `attestation.credentialId` as sent, and the credential id inside its
 * attestation object (what a reader of the record learns either way), without padding.
 */
export function credentialIdsIn(intent: Record<string, unknown>, paths: readonly string[]): string[] {
  const ids = new Set<string>()
  for (const path of paths)
    for (const item of itemsAt(intent, path.split('.'))) {
      if (!item || typeof item !== 'object') continue
      const record = item as Record<string, unknown>
      const attestation = record.attestation as Record<string, unknown> | undefined
      for (const id of [record.credentialId, attestation?.credentialId])
        if (typeof id === 'string' && id !== '') ids.add(id.replace(/=+$/, ''))
      const inObject = credentialIdOfAttestation(attestation?.attestationObject)
      if (inObject) ids.add(inObject)
    }
  return [...ids]
}

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

/** The credential id a base64url attestation object registers, or undefined if it holds none. */
function credentialIdOfAttestation(attestationObject: unknown): string | undefined {
  if (typeof attestationObject !== 'string' || attestationObject === '') return undefined
  try {
    const authData = decodeAttestationObject(isoBase64URL.toBuffer(attestationObject)).get('authData')
    const credentialId = parseAuthenticatorData(authData).credentialID
    return credentialId ? isoBase64URL.fromBuffer(credentialId) : undefined
  } catch {
    return undefined
  }
}

/**
 * Records in `tx` that `activityId`'s record shows each of `credentialIds`, where no record showed
 * it before: a sighting names the first activity that showed it, so a copy registered later, even
 * one made while the holder's registration waited for a vote, leaves that registration the first.
 * `blind` writes without reading, as a snapshot run must (an import: `createsOnly`), renaming a
 * sighting already recorded: the registration that showed it first then finds another activity
 * named and stays unproven, the safe side.
 */
export async function sightPasskeys(
  tx: Transaction,
  credentialIds: readonly string[],
  { activityId, now, blind = false }: { activityId: string; now: number; blind?: boolean },
): Promise<void> {
  for (const credentialId of credentialIds) {
    const id = passkeySightingId(credentialId)
    if (!blind && (await tx.get('passkeySightings', id))) continue
    await tx.put('passkeySightings', { id, activityId, createdAt: now, updatedAt: now })
  }
}

/**
 * Whether the registration `activityId` makes of `credentialId` is the first the service has
 * seen of it: no record showed it before, or only this activity's own (it waited for a vote or a
 * second factor). Records the sighting in `tx` when there was none.
 */
export async function firstSighting(
  tx: Transaction,
  credentialId: string,
  activityId: string,
  now: number,
): Promise<boolean> {
  const seen = await tx.get('passkeySightings', passkeySightingId(credentialId))
  if (seen) return seen.activityId === activityId
  await sightPasskeys(tx, [credentialId], { activityId, now, blind: true })
  return true
}
