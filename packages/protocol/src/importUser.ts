import type { AddressFormat, Curve } from './enums.ts'
import type { AccountSpec } from './resources.ts'

/**
 * One user of a bulk import (`latchkey_import_user`, one line of `latchkey-service import`'s JSONL):
 * everything public about a person, plus their keys HPKE-encrypted to the organization's import
 * key (`latchkey_init_user_import`). The parent organization's root vouches for the contacts.
 */
export interface ImportUserParams {
  /** The operator's own id for this person: a rerun skips an id already imported. */
  externalId: string
  userName?: string
  email?: string
  phoneNumber?: string
  /** OAuth identities: the person's first `oauth_login` with one of them lands in this account. */
  oauthProviders?: { issuer: string; subject: string; audience?: string; providerName?: string }[]
  /** WebAuthn credentials registered elsewhere for the same relying party. */
  passkeys?: { credentialId: string; cosePublicKey: string; name?: string; counter?: number }[]
  wallets?: { walletName: string; encryptedBundle: string; accounts: AccountSpec[] }[]
  privateKeys?: {
    privateKeyName: string
    encryptedBundle: string
    curve: Curve
    addressFormats: AddressFormat[]
  }[]
  /**
   * The addresses this person held (as `export-users` writes them). With wallets or private keys
   * on the line, each must be one they derive, or the line is refused: a check that the right
   * secret came with the right person. Without any, they are a record only.
   */
  addresses?: string[]
}

export interface ImportUserResult {
  subOrganizationId: string
  userId: string
  walletIds: string[]
  privateKeyIds: string[]
  /** True when this external id was imported before: nothing was written. */
  skipped: boolean
}

/** One external id already imported, whose account still exists (`latchkey_get_imported_users`). */
export interface ImportedUser {
  externalId: string
  subOrganizationId: string
  userId: string
  walletIds: string[]
  privateKeyIds: string[]
}

/** Most external ids one `latchkey_get_imported_users` asks about. */
export const MAX_IMPORTED_USERS_QUERY = 100
