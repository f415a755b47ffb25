// Which accounts a public key signs in to from the parent organization. A wallet's public key is
// no secret (a Solana key is its address; an Ethereum key is recovered from any transaction it
// signed), so anyone may register it in an account of their own. Such a registration
// (`ApiKeyRow.unproven`) must route nobody's wallet sign-in there: the stamp of a wallet sign-in
// names the parent (the client does not know its sub-organization), and it once landed in the
// first account holding the key, so an end user who registered a stranger's key first had that
// person signed in to an account the attacker controlled.
import { type ApiKeyRow, verifiedContactOf } from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Store.ts'

/**
 * Whether `key`'s account is one only that key gets into and nobody has used: one user, whose only
 * credential is the key (no other API key, no passkey, no OAuth identity, no verified e-mail or
 * phone to send a code to), and no activity ever submitted in it (so nobody imported a wallet
 * whose secret they keep, or dropped a credential of their own once the key was in). A wallet
 * sign-up makes such an account. Whoever made it, signing the key's holder in there gives nobody
 * else anything: the holder is its only way in, and its wallets are the service's own.
 */
export async function onlyKeyOfAccount(reads: Reads, key: ApiKeyRow): Promise<boolean> {
  const users = await reads.findBy('users', 'organizationId', key.organizationId)
  if (users.length !== 1 || users[0]!.id !== key.userId) return false
  // A verified contact gets a code sent to it.
  const [user] = users
  if (verifiedContactOf(user!, 'email') !== undefined || verifiedContactOf(user!, 'phone') !== undefined)
    return false
  const keys = await reads.findBy('apiKeys', 'organizationId', key.organizationId)
  if (keys.length !== 1) return false
  if ((await reads.findBy('authenticators', 'organizationId', key.organizationId)).length > 0) return false
  if ((await reads.findBy('oauthProviders', 'organizationId', key.organizationId)).length > 0) return false
  return (await reads.count('activities', 'organizationId', key.organizationId)) === 0
}

/**
 * Whether `key` is a key someone registered (`create_api_keys`, a sign-up), not a login's session
 * key: a login names its session key's public key without that key's signature, so an end user
 * could log in to their own account naming a stranger's wallet key (an Ethereum key's bytes are a
 * P-256 point half the time) and have that row route the stranger's sign-in.
 */
export const isRegisteredKey = (key: ApiKeyRow): boolean => REGISTERED_KEY_TYPES.has(key.credentialType)

const REGISTERED_KEY_TYPES = new Set<string>([
  'CREDENTIAL_TYPE_API_KEY_P256',
  'CREDENTIAL_TYPE_API_KEY_SECP256K1',
  'CREDENTIAL_TYPE_API_KEY_ED25519',
])

/**
 * Whether `key` may route a sign-in (or an account lookup) from its account's parent: a registered
 * key (`isRegisteredKey`) that proved
 * itself there (it stamped a request naming its account, the operator registered it, or it was
 * written before the mark existed), or its account is one only it gets into (`onlyKeyOfAccount`).
 */
export const signsInFromParent = async (reads: Reads, key: ApiKeyRow): Promise<boolean> =>
  isRegisteredKey(key) && (!key.unproven || (await onlyKeyOfAccount(reads, key)))
