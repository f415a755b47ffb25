import type {
  ApiKey,
  Authenticator,
  OauthProvider,
  PolicyEvaluation,
  User,
  UserTag,
  Wallet,
  WalletAccount,
} from '@latchkey/protocol'
import { timestampOf } from '../kernel/base/ids.ts'
import type {
  ApiKeyRow,
  AuthenticatorRow,
  OauthProviderRow,
  PolicyEvaluationRow,
  UserRow,
  UserTagRow,
  WalletAccountRow,
  WalletRow,
} from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Store.ts'

const times = (row: { createdAt: number; updatedAt: number }) => ({
  createdAt: timestampOf(row.createdAt),
  updatedAt: timestampOf(row.updatedAt),
})

export const renderApiKey = (row: ApiKeyRow): ApiKey => ({
  apiKeyId: row.id,
  apiKeyName: row.name,
  credential: { publicKey: row.publicKey, type: row.credentialType },
  ...(row.expirationSeconds !== undefined ? { expirationSeconds: row.expirationSeconds } : {}),
  ...times(row),
})

export const renderAuthenticator = (row: AuthenticatorRow): Authenticator => ({
  authenticatorId: row.id,
  authenticatorName: row.name,
  credentialId: row.credentialId,
  aaguid: row.aaguid,
  model: row.model,
  attestationType: row.attestationType,
  transports: row.transports,
  credential: { publicKey: row.publicKeyHex, type: 'CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR' },
  ...times(row),
})

export const renderOauthProvider = (row: OauthProviderRow): OauthProvider => ({
  providerId: row.id,
  providerName: row.providerName,
  issuer: row.issuer,
  audience: row.audience,
  subject: row.subject,
  ...times(row),
})

/** A user's own rows that `renderUser` shows with it. */
interface UserOwnRows {
  authenticators: AuthenticatorRow[]
  apiKeys: ApiKeyRow[]
  /** The ids of the tags naming the user, in the tags' order. */
  tagIds: string[]
  oauthProviders: OauthProviderRow[]
}

const userOf = (row: UserRow, own: UserOwnRows): User => ({
  userId: row.id,
  userName: row.userName,
  ...(row.userEmail !== undefined ? { userEmail: row.userEmail } : {}),
  ...(row.userPhoneNumber !== undefined ? { userPhoneNumber: row.userPhoneNumber } : {}),
  authenticators: own.authenticators.map(renderAuthenticator),
  apiKeys: own.apiKeys.map(renderApiKey),
  userTags: own.tagIds,
  oauthProviders: own.oauthProviders.map(renderOauthProvider),
  ...times(row),
})

export async function renderUser(reads: Reads, row: UserRow): Promise<User> {
  return userOf(row, {
    authenticators: await reads.findBy('authenticators', 'userId', row.id),
    apiKeys: await reads.findBy('apiKeys', 'userId', row.id),
    tagIds: (await reads.findBy('userTags', 'organizationId', row.organizationId))
      .filter((tag) => tag.userIds.includes(row.id))
      .map((tag) => tag.id),
    oauthProviders: await reads.findBy('oauthProviders', 'userId', row.id),
  })
}

/**
 * The users of `organizationId` (`list_users`), each as `renderUser` shows it, with the
 * organization's passkeys, API keys, tags and OAuth providers read once for all of them. Read
 * again for each user, the tags made a listing cost users × tags (and each tag's ids) on the
 * event loop: an end user with 1,000 users and 100 tags in their own sub-organization held
 * every other organization's requests for seconds with three `list_users`.
 */
export async function renderUsers(reads: Reads, organizationId: string, users: UserRow[]): Promise<User[]> {
  const byUser = <R extends { id: string }>(rows: R[], usersOf: (row: R) => Iterable<string>) => {
    const found = new Map<string, R[]>()
    for (const row of rows)
      for (const userId of new Set(usersOf(row))) {
        const list = found.get(userId)
        if (list) list.push(row)
        else found.set(userId, [row])
      }
    return (userId: string) => found.get(userId) ?? []
  }
  const authenticators = byUser(
    await reads.findBy('authenticators', 'organizationId', organizationId),
    (row) => [row.userId],
  )
  const apiKeys = byUser(await reads.findBy('apiKeys', 'organizationId', organizationId), (row) => [
    row.userId,
  ])
  const tags = byUser(await reads.findBy('userTags', 'organizationId', organizationId), (tag) => tag.userIds)
  const oauthProviders = byUser(
    await reads.findBy('oauthProviders', 'organizationId', organizationId),
    (row) => [row.userId],
  )
  return users.map((row) =>
    userOf(row, {
      authenticators: authenticators(row.id),
      apiKeys: apiKeys(row.id),
      tagIds: tags(row.id).map((tag) => tag.id),
      oauthProviders: oauthProviders(row.id),
    }),
  )
}

export const renderUserTag = (row: UserTagRow): UserTag => ({
  userTagId: row.id,
  userTagName: row.name,
  userIds: row.userIds,
  ...times(row),
})

export const renderWallet = (row: WalletRow): Wallet => ({
  walletId: row.id,
  walletName: row.name,
  exported: row.exported,
  imported: row.imported,
  ...times(row),
})

export const renderWalletAccount = (row: WalletAccountRow): WalletAccount => ({
  walletAccountId: row.id,
  organizationId: row.organizationId,
  walletId: row.walletId,
  curve: row.curve,
  pathFormat: row.pathFormat,
  path: row.path,
  addressFormat: row.addressFormat,
  address: row.address,
  publicKey: row.publicKey,
  ...times(row),
})

export const renderPolicyEvaluation = (row: PolicyEvaluationRow): PolicyEvaluation => ({
  id: row.id,
  activityId: row.activityId,
  organizationId: row.organizationId,
  voteId: row.voteId,
  policyEvaluations: row.outcomes.map((outcome) => ({ ...outcome })),
  createdAt: timestampOf(row.createdAt),
})
