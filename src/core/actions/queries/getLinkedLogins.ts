import type { CredentialType, User } from '@latchkey/protocol'
import type { Latchkey } from '../../types.ts'
import { mfaUserId } from '../activities/mfaUser.ts'
import { getUser } from './getUser.ts'
import type { QueryActionOptions } from './queryBody.ts'

/** One way into an account, as `<LinkedLogins/>` lists it. */
export type LinkedLogin =
  | { kind: 'email'; id: string; label: string }
  | { kind: 'phone'; id: string; label: string }
  /** `id` is the `providerId`; `label` the provider's name, `issuer` says whose it is. */
  | { kind: 'oauth'; id: string; label: string; issuer: string }
  /** `id` is the `authenticatorId`. */
  | { kind: 'passkey'; id: string; label: string }
  /** A wallet (secp256k1: Ethereum, Ed25519: Solana) or a P-256 API key; `id` is the `apiKeyId`. */
  | { kind: 'wallet' | 'apiKey'; id: string; label: string; publicKey: string }

/** Session keys end: they are no way back in, and the list leaves them out. */
const SESSION_CREDENTIALS: readonly CredentialType[] = [
  'CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256',
  'CREDENTIAL_TYPE_OTP_AUTH_KEY_P256',
  'CREDENTIAL_TYPE_OAUTH_KEY_P256',
  'CREDENTIAL_TYPE_EMAIL_AUTH_KEY_P256',
  'CREDENTIAL_TYPE_LOGIN',
]
const WALLET_CREDENTIALS: readonly CredentialType[] = [
  'CREDENTIAL_TYPE_API_KEY_SECP256K1',
  'CREDENTIAL_TYPE_API_KEY_ED25519',
]

/** The durable ways into `user`'s account, in a stable order: contacts, OAuth, passkeys, keys. */
export function linkedLoginsOf(user: User): LinkedLogin[] {
  const logins: LinkedLogin[] = []
  if (user.userEmail) logins.push({ kind: 'email', id: 'email', label: user.userEmail })
  if (user.userPhoneNumber) logins.push({ kind: 'phone', id: 'phone', label: user.userPhoneNumber })
  for (const provider of user.oauthProviders)
    logins.push({
      kind: 'oauth',
      id: provider.providerId,
      label: provider.providerName,
      issuer: provider.issuer,
    })
  for (const authenticator of user.authenticators)
    logins.push({
      kind: 'passkey',
      id: authenticator.authenticatorId,
      label: authenticator.authenticatorName,
    })
  for (const key of user.apiKeys) {
    if (SESSION_CREDENTIALS.includes(key.credential.type)) continue
    logins.push({
      kind: WALLET_CREDENTIALS.includes(key.credential.type) ? 'wallet' : 'apiKey',
      id: key.apiKeyId,
      label: key.apiKeyName,
      publicKey: key.credential.publicKey,
    })
  }
  return logins
}

export type GetLinkedLoginsParameters = {
  /** @default the session's user */
  userId?: string | undefined
} & QueryActionOptions
export type GetLinkedLoginsReturnType = { userId: string; logins: LinkedLogin[] }

/**
 * Every durable way into the user's account (`get_user`): the e-mail address and phone number,
 * OAuth identities, passkeys, wallets and API keys; sessions are left out.
 */
export async function getLinkedLogins(
  client: Latchkey,
  parameters: GetLinkedLoginsParameters = {},
): Promise<GetLinkedLoginsReturnType> {
  const { userId: given, ...options } = parameters
  const userId = await mfaUserId(client, { userId: given, sessionId: options.sessionId })
  const { user } = await getUser(client, { ...options, userId })
  return { userId, logins: linkedLoginsOf(user) }
}
