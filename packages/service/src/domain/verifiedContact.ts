import type { OtpType } from '@latchkey/protocol'
import type { ActivityContext } from '../kernel/registry.ts'
import { type ContactKind, type UserRow, verifiedContactOf } from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Reads.ts'
import type { Store } from '../kernel/store/Store.ts'

export type { ContactKind } from '../kernel/store/model.ts'

const FIELDS = {
  email: { value: 'userEmail', unverified: 'userEmailUnverified', verified: 'verifiedEmail' },
  phone: { value: 'userPhoneNumber', unverified: 'userPhoneNumberUnverified', verified: 'verifiedPhone' },
} as const

export const contactKindOf = (otpType: OtpType): ContactKind =>
  otpType === 'OTP_TYPE_EMAIL' ? 'email' : 'phone'

/**
 * The user's contact of `kind` if it may receive codes and route logins (`verifiedContactOf`,
 * which the store's index of verified contacts is made by).
 */
export const verifiedContact = verifiedContactOf

/** True when `user` holds `contact` (normalised) as a verified contact of `kind`. */
export const holdsVerifiedContact = (user: UserRow, kind: ContactKind, contact: string): boolean =>
  verifiedContact(user, kind) === contact

/**
 * The users (of any organization) holding `contact` (normalised) as a verified contact of `kind`,
 * in id order, read through the users' index of verified contacts: the unverified copies of the
 * contact anyone may set on users of their own account are not read.
 */
export const usersHoldingContact = (reads: Reads, kind: ContactKind, contact: string): Promise<UserRow[]> =>
  reads.findBy('users', FIELDS[kind].verified, contact)

/**
 * Whether some user (of any organization) holds `contact` (normalised) as a verified contact of
 * `kind`: one row of the users' index of verified contacts at most, whatever the number of users
 * holding it, verified or not (an unverified copy, which anyone may set, makes nothing known).
 */
export async function someoneHoldsContact(
  reads: Pick<Store, 'pageBy'>,
  kind: ContactKind,
  contact: string,
): Promise<boolean> {
  const field = FIELDS[kind].verified
  return (await reads.pageBy('users', { field, value: contact, by: 'id', limit: 1 })).length > 0
}

/**
 * The accounts (sub-organizations of `parentId` other than `exceptId`) one of whose users holds
 * `contact` (normalised) verified, found through the users' index of verified contacts (migration
 * 0021_verified_contacts): a few reads whatever the number of the parent's accounts, and none for
 * the unverified copies of the contact anyone may set in their own account.
 */
export async function accountsHoldingContact(
  reads: Reads,
  query: { parentId: string; kind: ContactKind; contact: string; exceptId?: string },
): Promise<string[]> {
  const found: string[] = []
  for (const user of await usersHoldingContact(reads, query.kind, query.contact)) {
    if (user.organizationId === query.exceptId || found.includes(user.organizationId)) continue
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
