import { oauthIdentityKey } from '@latchkey/protocol'
import { type ClaimedValue, releaseClaim } from '../kernel/accountClaims.ts'
import type { AuthenticatorRow, OauthProviderRow, OrganizationRow, UserRow } from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Reads.ts'
import type { Transaction } from '../kernel/store/Transaction.ts'
import { holdsVerifiedContact } from './verifiedContact.ts'

/**
 * The values an account's claims name (kernel/accountClaims.ts), read from its rows, and the
 * release of those claims by whatever takes a value away from the account, in its transaction.
 */

/** A user's contacts as claims name them (whether verified or not: a release looks at both). */
export const contactValues = (user: UserRow): ClaimedValue[] => [
  ...(user.userEmail ? [{ kind: 'email' as const, value: user.userEmail.trim().toLowerCase() }] : []),
  ...(user.userPhoneNumber ? [{ kind: 'phone' as const, value: user.userPhoneNumber }] : []),
]

/** An OAuth identity as claims name it: the provider's issuer (canonical) and subject (@latchkey/protocol oauthIdentity). */
export const oauthValue = (row: Pick<OauthProviderRow, 'issuer' | 'subject'>): ClaimedValue => ({
  kind: 'oauth',
  value: oauthIdentityKey(row),
})

export const passkeyValue = (row: Pick<AuthenticatorRow, 'credentialId'>): ClaimedValue => ({
  kind: 'passkey',
  value: row.credentialId.replace(/=+$/, ''),
})

/** Everything of `user` a claim may name: its contacts, OAuth identities and passkeys. */
export async function valuesOfUser(reads: Reads, user: UserRow): Promise<ClaimedValue[]> {
  return [
    ...contactValues(user),
    ...(await reads.findBy('oauthProviders', 'userId', user.id)).map(oauthValue),
    ...(await reads.findBy('authenticators', 'userId', user.id)).map(passkeyValue),
  ]
}

/** Everything of the account `organizationId` a claim may name. */
export async function valuesOfAccount(reads: Reads, organizationId: string): Promise<ClaimedValue[]> {
  return [
    ...(await reads.findBy('users', 'organizationId', organizationId)).flatMap(contactValues),
    ...(await reads.findBy('oauthProviders', 'organizationId', organizationId)).map(oauthValue),
    ...(await reads.findBy('authenticators', 'organizationId', organizationId)).map(passkeyValue),
  ]
}

/**
 * True while the account `organizationId` holds `claimed`: a verified contact of one of its
 * users (an unverified copy routes no login), an OAuth identity or a passkey. A deleted account
 * holds nothing.
 */
export async function accountHolds(
  reads: Reads,
  organizationId: string,
  claimed: ClaimedValue,
): Promise<boolean> {
  switch (claimed.kind) {
    case 'email':
    case 'phone':
      return (await reads.findBy('users', 'organizationId', organizationId)).some((user) =>
        holdsVerifiedContact(user, claimed.kind as 'email' | 'phone', claimed.value),
      )
    case 'oauth':
      return (await reads.findBy('oauthProviders', 'organizationId', organizationId)).some(
        (row) => oauthValue(row).value === claimed.value,
      )
    case 'passkey':
      return (await reads.findBy('authenticators', 'organizationId', organizationId)).some(
        (row) => passkeyValue(row).value === claimed.value,
      )
  }
}

const distinct = (values: ClaimedValue[]) => [
  ...new Map(values.map((value) => [`${value.kind}\n${value.value}`, value])).values(),
]

/** Releases the account's claim on each of `values` that `held` (when given) says it no longer holds. */
async function release(
  tx: Transaction,
  organization: Pick<OrganizationRow, 'id' | 'parentOrganizationId'>,
  values: ClaimedValue[],
  held?: (value: ClaimedValue) => Promise<boolean>,
): Promise<void> {
  const parent = organization.parentOrganizationId
  if (parent === undefined) return
  for (const value of distinct(values))
    if (!(await held?.(value)))
      await releaseClaim(tx, { ...value, organizationId: parent, subOrganizationId: organization.id })
}

/**
 * After a change in `tx` that may have taken `values` away from the account `organization` (a
 * sub-organization: claims live under its parent), releases the claim on each one the account no
 * longer holds. Call it once the change is written, in the same transaction.
 */
export const releaseUnheld = (
  tx: Transaction,
  organization: Pick<OrganizationRow, 'id' | 'parentOrganizationId'>,
  values: ClaimedValue[],
): Promise<void> => release(tx, organization, values, (value) => accountHolds(tx, organization.id, value))

/** Releases every claim the account `organization` holds on `values`: it is being deleted. */
export const releaseAll = (
  tx: Transaction,
  organization: Pick<OrganizationRow, 'id' | 'parentOrganizationId'>,
  values: ClaimedValue[],
): Promise<void> => release(tx, organization, values)
