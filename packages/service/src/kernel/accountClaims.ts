import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { ConflictError } from './base/errors.ts'
import type { ImportClaimRow } from './store/model.ts'
import type { Transaction } from './store/Transaction.ts'

/**
 * The contract between the activities that give an account of a parent organization something
 * that finds it at login (a vouched or proven e-mail or phone, an OAuth identity, a passkey: the
 * importing wing, `create_sub_organization`, the sign-in wing's OAuth and verification-token
 * hooks): one claim row per parent and value, its id derived from them, so two accounts can never
 * both hold it. Two transactions claiming the same value at once meet the primary key (on
 * PostgreSQL also when one of them is a snapshot run, which no SERIALIZABLE read would see): the
 * later one reruns, finds the claim and is refused naming its field. What takes the value away
 * from the account (deleting it or the user, removing or changing the contact, unlinking the
 * identity or passkey) releases the claim in its own transaction (`releaseClaim`), so the value
 * is free for an import or a sign-up once that commits.
 */
export type ClaimKind = ImportClaimRow['kind']

/** The id of the claim of `value` (normalised by the caller) under `organizationId`, the parent. */
export const accountClaimId = (organizationId: string, kind: ClaimKind, value: string): string =>
  bytesToHex(sha256(utf8ToBytes(`${organizationId}\n${kind}\n${value}`))).slice(0, 40)

export interface AccountClaim {
  /** The parent organization. */
  organizationId: string
  kind: ClaimKind
  value: string
  subOrganizationId: string
  /** The request field that names the value, for the refusal. */
  field: string
  now: number
  /** The import's external id, when an import claims it. */
  externalId?: string
  /** The refusal's message. @default `<field> already belongs to another account of this organization` */
  message?: string
}

/**
 * Claims `value` for `subOrganizationId` in `tx`; refused (409 naming the field) when another
 * account of the parent holds the claim, unless `stale` says that account no longer holds it.
 */
export async function claimForAccount(
  tx: Transaction,
  claim: AccountClaim,
  stale: (held: ImportClaimRow) => Promise<boolean> = async () => false,
): Promise<void> {
  if (!(await claimIfFree(tx, claim, stale)))
    throw new ConflictError({
      field: claim.field,
      message: claim.message ?? `${claim.field} already belongs to another account of this organization`,
    })
}

/**
 * Claims `value` for `subOrganizationId` in `tx` as `claimForAccount` does, but answers false
 * (writing nothing) where that refuses: for a value the account may simply not get (an address an
 * OIDC token carries, left unverified when another account holds it).
 */
export async function claimIfFree(
  tx: Transaction,
  claim: AccountClaim,
  stale: (held: ImportClaimRow) => Promise<boolean> = async () => false,
): Promise<boolean> {
  const id = accountClaimId(claim.organizationId, claim.kind, claim.value)
  const held = await tx.get('importClaims', id)
  if (held?.subOrganizationId === claim.subOrganizationId) return true
  if (held && !(await stale(held))) return false
  await tx.put('importClaims', {
    id,
    organizationId: claim.organizationId,
    kind: claim.kind,
    subOrganizationId: claim.subOrganizationId,
    ...(claim.externalId !== undefined ? { externalId: claim.externalId } : {}),
    createdAt: held?.createdAt ?? claim.now,
    updatedAt: claim.now,
  })
  return true
}

/** One value an account may hold a claim on. */
export interface ClaimedValue {
  kind: ClaimKind
  /** Normalised as claimed: a lower-case e-mail, an E.164 number, `issuer\nsubject`, a credential id without padding. */
  value: string
}

/**
 * Deletes the claim of `value` under `organizationId` (the parent) if `subOrganizationId` holds
 * it, in `tx`: the transaction that takes the value away from that account. A claim another
 * account holds is left alone. True when a claim was released.
 */
export async function releaseClaim(
  tx: Transaction,
  claim: ClaimedValue & { organizationId: string; subOrganizationId: string },
): Promise<boolean> {
  const id = accountClaimId(claim.organizationId, claim.kind, claim.value)
  const held = await tx.get('importClaims', id)
  if (held?.subOrganizationId !== claim.subOrganizationId) return false
  await tx.delete('importClaims', id)
  return true
}
