// Which accounts a public key signs in to from the parent organization. A wallet's public key is
// no secret (a Solana key is its address; an Ethereum key is recovered from any transaction it
// signed), so anyone may register it in an account of their own. Such a registration
// (`ApiKeyRow.unproven`) must route nobody's wallet sign-in there: the stamp of a wallet sign-in
// names the parent (the client does not know its sub-organization), and it once landed in the
// first account holding the key, so an end user who registered a stranger's key first had that
// person signed in to an account the attacker controlled.
//
// A key routes a sign-in (or an account lookup) from its account's parent when it is a registered
// key (`isRegisteredKey`: not a login's session key, whose public key a login names without that
// key's signature, so an end user could log in to their own account naming a stranger's wallet
// key) that proved itself there (it stamped a request naming its account, the operator registered
// it, or it was written before the mark existed), or whose account is one only it gets into
// (`onlyKeyOfAccount`). Both are read through the index of registered keys (`registeredKey`), a
// bounded number of rows whatever the number of copies anyone registered.
import { type ApiKeyRow, registeredKeyOf, verifiedContactOf } from '../kernel/store/model.ts'
import type { Store } from '../kernel/store/Store.ts'

/** What the rules here read with: rows by id, and pages of a bounded number of rows (`Store.pageBy`). */
export type PageReads = Pick<Store, 'pageBy' | 'get'>

/** At most `limit` rows of `table` in `organizationId`, the first by id. */
const firstOf = <T extends 'users' | 'apiKeys' | 'authenticators' | 'oauthProviders' | 'activities'>(
  reads: PageReads,
  table: T,
  organizationId: string,
  limit: number,
) => reads.pageBy(table, { field: 'organizationId', value: organizationId, by: 'id', limit })

/**
 * Whether `key`'s account is one only that key gets into and nobody has used: one user, whose only
 * credential is the key (no other API key, no passkey, no OAuth identity, no verified e-mail or
 * phone to send a code to), and no activity ever submitted in it (so nobody imported a wallet
 * whose secret they keep, or dropped a credential of their own once the key was in). A wallet
 * sign-up makes such an account. Whoever made it, signing the key's holder in there gives nobody
 * else anything: the holder is its only way in, and its wallets are the service's own.
 *
 * A few rows whatever the size of the account (two users, two keys, one passkey, one OAuth
 * identity, one activity at most): an anonymous lookup asks this of each holder of a key, and an
 * account with 10,000 users holding it once cost 10,000 rows for each of them.
 */
export async function onlyKeyOfAccount(reads: PageReads, key: ApiKeyRow): Promise<boolean> {
  const { organizationId } = key
  const users = await firstOf(reads, 'users', organizationId, 2)
  if (users.length !== 1 || users[0]!.id !== key.userId) return false
  // A verified contact gets a code sent to it.
  const [user] = users
  if (verifiedContactOf(user!, 'email') !== undefined || verifiedContactOf(user!, 'phone') !== undefined)
    return false
  if ((await firstOf(reads, 'apiKeys', organizationId, 2)).length !== 1) return false
  if ((await firstOf(reads, 'authenticators', organizationId, 1)).length > 0) return false
  if ((await firstOf(reads, 'oauthProviders', organizationId, 1)).length > 0) return false
  return (await firstOf(reads, 'activities', organizationId, 1)).length === 0
}

/** Holders of a key read a page at a time, and the most pages read of each kind (proven, unproven). */
const HOLDERS_PAGE = 50
const HOLDERS_PAGES = 4

/**
 * The registered holders of `publicKey` (`isRegisteredKey`) in sub-organizations of `parentId`
 * that proved themselves (`proven`: first by id) or not (newest first), read through their index
 * (`ApiKeyRow.registeredKey`) a page at a time while the caller asks for more, each holder's
 * organization read once, and at most `HOLDERS_PAGES` pages: a bounded number of reads whatever
 * the number of holders. A proven holder is made by the key's holder or an operator only; the
 * unproven copies and the login session keys anyone may make holding a stranger's public key are
 * never read past the proven ones, and copies registered before an account are read after it.
 */
export async function* registeredHoldersUnder(
  reads: PageReads,
  publicKey: string,
  parentId: string,
  proven: boolean,
): AsyncGenerator<ApiKeyRow> {
  const parentOf = new Map<string, string | undefined>()
  let after: string | undefined
  for (let page = 0; page < HOLDERS_PAGES; page++) {
    const holders = await reads.pageBy('apiKeys', {
      field: 'registeredKey',
      value: registeredKeyOf(publicKey, proven),
      by: 'id',
      after,
      limit: HOLDERS_PAGE,
      descending: !proven,
    })
    for (const holder of holders) {
      if (!parentOf.has(holder.organizationId))
        parentOf.set(
          holder.organizationId,
          (await reads.get('organizations', holder.organizationId))?.parentOrganizationId,
        )
      if (parentOf.get(holder.organizationId) === parentId) yield holder
    }
    if (holders.length < HOLDERS_PAGE) return
    after = holders.at(-1)!.id
  }
}

/**
 * The holders of `publicKey` under `parentId` whose accounts only they get into
 * (`onlyKeyOfAccount`), newest first, among its unproven registered holders
 * (`registeredHoldersUnder`): only holders `keep` keeps (a sign-in's curve) count, `seen` is
 * called for each, and each organization is judged once (a second holder in one account is never
 * its only key).
 */
export async function* onlyKeyHoldersUnder(
  reads: PageReads,
  publicKey: string,
  parentId: string,
  {
    keep = () => true,
    seen = () => {},
  }: { keep?: (key: ApiKeyRow) => boolean; seen?: (key: ApiKeyRow) => void } = {},
): AsyncGenerator<ApiKeyRow> {
  const judged = new Set<string>()
  for await (const key of registeredHoldersUnder(reads, publicKey, parentId, false)) {
    if (!keep(key)) continue
    seen(key)
    if (judged.has(key.organizationId)) continue
    judged.add(key.organizationId)
    if (await onlyKeyOfAccount(reads, key)) yield key
  }
}
