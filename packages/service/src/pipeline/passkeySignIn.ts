// Which accounts a passkey signs in to from the parent organization, for the account lookups by
// credential id or public key (`list_suborgs`, the auth proxy's `/v1/account`). A passkey's
// credential id and public key are all it takes to register it ("none" attestations sign nothing),
// so a copy someone else registered (`AuthenticatorRow.unproven`) must not be the account a lookup
// names: a client that stamps naming the account the lookup found (the published clients' passkey
// login, the kit's `signInWithPasskey`) proves the copy by that very stamp and signs in there.
// The rule is the one authenticate.ts's `passkeyFor` routes a stamp naming the parent by, and
// `onlyPasskeyOfAccount` is the one it uses.
import { type AuthenticatorRow, verifiedContactOf } from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Store.ts'

/**
 * Of `rows` (the rows of one credential id, or of one public key), those whose account a sign-in
 * naming `parentId` may land in, as `passkeyFor` routes it: every sub-organization of `parentId`
 * where the passkey proved itself (it signed a request naming its organization, the operator
 * registered it, or the row predates the mark); if there is none, the newest one only that passkey
 * gets into (`onlyPasskeyOfAccount`), per credential id; else none.
 */
export async function passkeysSigningInFrom(
  reads: Reads,
  rows: AuthenticatorRow[],
  parentId: string,
): Promise<AuthenticatorRow[]> {
  const byCredential = new Map<string, AuthenticatorRow[]>()
  for (const row of rows)
    if ((await reads.get('organizations', row.organizationId))?.parentOrganizationId === parentId)
      byCredential.set(row.credentialId, [...(byCredential.get(row.credentialId) ?? []), row])
  const found: AuthenticatorRow[] = []
  for (const [credentialId, mine] of byCredential) {
    const proven = mine.filter((row) => !row.unproven)
    if (proven.length > 0) {
      found.push(...proven)
      continue
    }
    // The routing weighs every row of the credential id under the parent, not only those found by
    // public key: a proven row among them routes the sign-in there instead.
    const under: AuthenticatorRow[] = []
    for (const row of await reads.findBy('authenticators', 'credentialId', credentialId))
      if ((await reads.get('organizations', row.organizationId))?.parentOrganizationId === parentId)
        under.push(row)
    if (under.some((row) => !row.unproven)) continue
    for (const row of under.sort((a, b) => b.createdAt - a.createdAt))
      if (await onlyPasskeyOfAccount(reads, row)) {
        if (mine.some((candidate) => candidate.id === row.id)) found.push(row)
        break
      }
  }
  return found
}

/**
 * Whether `passkey`'s account is one only that passkey gets into and nobody has used: one user, no
 * verified contact, no other passkey, no OAuth identity, no activity, and no API key but the
 * short-lived session keys a sign-up registered beside the passkey (`ApiKeyRow.origin` names it).
 * `authenticate.ts`'s `passkeyFor` routes by it too.
 */
export async function onlyPasskeyOfAccount(reads: Reads, passkey: AuthenticatorRow): Promise<boolean> {
  const { organizationId } = passkey
  const users = await reads.findBy('users', 'organizationId', organizationId)
  if (users.length !== 1 || users[0]!.id !== passkey.userId) return false
  const [user] = users
  if (verifiedContactOf(user!, 'email') !== undefined || verifiedContactOf(user!, 'phone') !== undefined)
    return false
  const passkeys = await reads.findBy('authenticators', 'organizationId', organizationId)
  if (passkeys.length !== 1) return false
  for (const key of await reads.findBy('apiKeys', 'organizationId', organizationId))
    if (key.expirationSeconds === undefined || !key.origin?.authenticatorIds?.includes(passkey.id))
      return false
  if ((await reads.findBy('oauthProviders', 'organizationId', organizationId)).length > 0) return false
  return (await reads.count('activities', 'organizationId', organizationId)) === 0
}
