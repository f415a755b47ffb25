import type { OtpType } from '@latchkey/protocol'
import type { ActivityContext } from '../kernel/registry.ts'
import type { UserRow } from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Reads.ts'

/** Which of a user's contacts: the e-mail address or the phone number. */
export type ContactKind = 'email' | 'phone'

const FIELDS = {
  email: { value: 'userEmail', unverified: 'userEmailUnverified' },
  phone: { value: 'userPhoneNumber', unverified: 'userPhoneNumberUnverified' },
} as const

export const contactKindOf = (otpType: OtpType): ContactKind =>
  otpType === 'OTP_TYPE_EMAIL' ? 'email' : 'phone'

/**
 * The user's contact of `kind` if it may receive codes and route logins: proven by a verification
 * token its key redeemed, or set in the parent organization (the operator vouches for it).
 * Rows written before contacts carried the mark count as verified.
 */
export function verifiedContact(user: UserRow, kind: ContactKind): string | undefined {
  const fields = FIELDS[kind]
  if (user[fields.unverified]) return undefined
  const value = user[fields.value]
  return kind === 'email' ? value?.trim().toLowerCase() : value
}

/** True when `user` holds `contact` (normalised) as a verified contact of `kind`. */
export const holdsVerifiedContact = (user: UserRow, kind: ContactKind, contact: string): boolean =>
  verifiedContact(user, kind) === contact

/**
 * The accounts (sub-organizations of `parentId` other than `exceptId`) one of whose users holds
 * `contact` (normalised) verified, found through the users' contact index (migration
 * 0011_import_contacts): a few reads whatever the number of the parent's accounts.
 */
export async function accountsHoldingContact(
  reads: Reads,
  query: { parentId: string; kind: ContactKind; contact: string; exceptId?: string },
): Promise<string[]> {
  const found: string[] = []
  for (const user of await reads.findBy('users', FIELDS[query.kind].value, query.contact)) {
    if (user.organizationId === query.exceptId || found.includes(user.organizationId)) continue
    if (!holdsVerifiedContact(user, query.kind, query.contact)) continue
    const organization = await reads.get('organizations', user.organizationId)
    if (organization?.parentOrganizationId === query.parentId) found.push(organization.id)
  }
  return found
}

/** The user row with its contact of `kind` set to `value`, marked unverified unless `verified`. */
export function withContact(user: UserRow, kind: ContactKind, value: string, verified: boolean): UserRow {
  const fields = FIELDS[kind]
  const next: UserRow = { ...user, [fields.value]: value }
  delete next[fields.unverified]
  if (!verified) next[fields.unverified] = true
  return next
}

/**
 * True when the caller speaks for the operator: a root user of a top-level organization acting
 * in it. Contacts it sets need no proof; anyone else's are unverified until proven.
 */
export const callerVouchesForContacts = (ctx: Pick<ActivityContext, 'organization' | 'caller'>): boolean =>
  ctx.organization.parentOrganizationId === undefined &&
  ctx.caller.organizationId === ctx.organization.id &&
  ctx.organization.rootUserIds.includes(ctx.caller.userId)

/** The contacts of a new user row, marked unverified unless `vouched`. */
export function newUserContacts(
  params: { userEmail?: string; userPhoneNumber?: string },
  vouched: boolean,
): Pick<UserRow, 'userEmail' | 'userPhoneNumber' | 'userEmailUnverified' | 'userPhoneNumberUnverified'> {
  return {
    ...(params.userEmail !== undefined ? { userEmail: params.userEmail } : {}),
    ...(params.userEmail !== undefined && !vouched ? { userEmailUnverified: true as const } : {}),
    ...(params.userPhoneNumber !== undefined ? { userPhoneNumber: params.userPhoneNumber } : {}),
    ...(params.userPhoneNumber !== undefined && !vouched ? { userPhoneNumberUnverified: true as const } : {}),
  }
}
