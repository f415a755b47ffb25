// Which accounts a passkey signs in to from the parent organization, for the account lookups by
// credential id or public key (`list_suborgs`, the auth proxy's `/v1/account`). A passkey's
// credential id and public key are all it takes to register it ("none" attestations sign nothing),
// so a copy someone else registered (`AuthenticatorRow.unproven`) must not be the account a lookup
// names: a client that stamps naming the account the lookup found (the published clients' passkey
// login, the kit's `signInWithPasskey`) proves the copy by that very stamp and signs in there.
// The rule is the one authenticate.ts's `passkeyFor` routes a stamp naming the parent by, and
// `onlyPasskeyOfAccount` is the one it uses.
import {
  type AuthenticatorRow,
  type TableName,
  type Tables,
  verifiedContactOf,
} from '../kernel/store/model.ts'
import type { Reads, Store } from '../kernel/store/Store.ts'

/**
 * What the rules here read with: committed reads, which page (`Store.pageBy`) where they can (the
 * store, a transaction). A request's prefetched reads do not: `findBy` stands in there, whole.
 */
export type PasskeyReads = Reads & Partial<Pick<Store, 'pageBy'>>

/** At most `limit` rows of `table` whose `field` is `value`, the first by id (all of them where `reads` cannot page). */
async function firstRows<T extends TableName>(
  reads: PasskeyReads,
  table: T,
  { field, value, limit }: { field: keyof Tables[T] & string; value: string; limit: number },
): Promise<Tables[T][]> {
  if (reads.pageBy) return reads.pageBy(table, { field, value, by: 'id', limit })
  return (await reads.findBy(table, field, value)).slice(0, limit)
}

/**
 * Rows of one credential id read to route it. Registration refuses a credential id twice under one
 * parent (domain/users.ts, `claimPasskey`), so its rows are one per parent organization: a full
 * page is more parents than a service has, and such a credential id routes nothing here rather
 * than read them all.
 */
const CREDENTIAL_ROWS = 50

/**
 * API keys a user's registration gives it at most (`apiKeys`, domain/params.ts): an account with
 * more is not one a sign-up made.
 */
const KEYS_OF_A_SIGN_UP = 10

/**
 * Of `rows` (the rows of one credential id, or of one public key), those whose account a sign-in
 * naming `parentId` may land in, as `passkeyFor` routes it: every sub-organization of `parentId`
 * where the passkey proved itself (it signed a request naming its organization, the operator
 * registered it, or the row predates the mark); if there is none, the newest one only that passkey
 * gets into (`onlyPasskeyOfAccount`), per credential id; else none.
 *
 * A bounded number of reads per row whatever the rows share: each organization is read once, a
 * credential id's rows a page at most (`CREDENTIAL_ROWS`), and each account judged once (a second
 * passkey in one account is never its only one). One key registered under N credential ids on N
 * users of one account once read every user and passkey of it N times.
 */
export async function passkeysSigningInFrom(
  reads: PasskeyReads,
  rows: AuthenticatorRow[],
  parentId: string,
): Promise<AuthenticatorRow[]> {
  const parents = new Map<string, string | undefined>()
  const underParent = async (organizationId: string) => {
    if (!parents.has(organizationId))
      parents.set(organizationId, (await reads.get('organizations', organizationId))?.parentOrganizationId)
    return parents.get(organizationId) === parentId
  }
  const byCredential = new Map<string, AuthenticatorRow[]>()
  for (const row of rows)
    if (await underParent(row.organizationId))
      byCredential.set(row.credentialId, [...(byCredential.get(row.credentialId) ?? []), row])
  const found: AuthenticatorRow[] = []
  const judged = new Set<string>()
  for (const [credentialId, mine] of byCredential) {
    const proven = mine.filter((row) => !row.unproven)
    if (proven.length > 0) {
      found.push(...proven)
      continue
    }
    // The routing weighs every row of the credential id under the parent, not only those found by
    // public key: a proven row among them routes the sign-in there instead.
    const all = await firstRows(reads, 'authenticators', {
      field: 'credentialId',
      value: credentialId,
      limit: CREDENTIAL_ROWS,
    })
    if (all.length === CREDENTIAL_ROWS) continue
    const under: AuthenticatorRow[] = []
    for (const row of all) if (await underParent(row.organizationId)) under.push(row)
    if (under.some((row) => !row.unproven)) continue
    for (const row of under.sort((a, b) => b.createdAt - a.createdAt)) {
      if (judged.has(row.organizationId)) continue
      judged.add(row.organizationId)
      if (await onlyPasskeyOfAccount(reads, row)) {
        if (mine.some((candidate) => candidate.id === row.id)) found.push(row)
        break
      }
    }
  }
  return found
}

/**
 * Whether `passkey`'s account is one only that passkey gets into and nobody has used: one user, no
 * verified contact, no other passkey, no OAuth identity, no activity, and no API key but the
 * short-lived session keys a sign-up registered beside the passkey (`ApiKeyRow.origin` names it).
 * `authenticate.ts`'s `passkeyFor` routes by it too.
 *
 * A few rows whatever the size of the account (two users, two passkeys, one OAuth identity, one
 * activity, the keys of a sign-up and one more at most), where `reads` page.
 */
export async function onlyPasskeyOfAccount(reads: PasskeyReads, passkey: AuthenticatorRow): Promise<boolean> {
  const { organizationId } = passkey
  const inAccount = <T extends 'users' | 'authenticators' | 'oauthProviders' | 'activities' | 'apiKeys'>(
    table: T,
    limit: number,
  ) => firstRows(reads, table, { field: 'organizationId', value: organizationId, limit })
  const users = await inAccount('users', 2)
  if (users.length !== 1 || users[0]!.id !== passkey.userId) return false
  const [user] = users
  if (verifiedContactOf(user!, 'email') !== undefined || verifiedContactOf(user!, 'phone') !== undefined)
    return false
  if ((await inAccount('authenticators', 2)).length !== 1) return false
  if ((await inAccount('oauthProviders', 1)).length > 0) return false
  if ((await inAccount('activities', 1)).length > 0) return false
  const keys = await inAccount('apiKeys', KEYS_OF_A_SIGN_UP + 1)
  if (keys.length > KEYS_OF_A_SIGN_UP) return false
  return keys.every(
    (key) =>
      key.expirationSeconds !== undefined && key.origin?.authenticatorIds?.includes(passkey.id) === true,
  )
}
