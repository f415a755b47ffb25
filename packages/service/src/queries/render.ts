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

export async function renderUser(reads: Reads, row: UserRow): Promise<User> {
  return {
    userId: row.id,
    userName: row.userName,
    ...(row.userEmail !== undefined ? { userEmail: row.userEmail } : {}),
    ...(row.userPhoneNumber !== undefined ? { userPhoneNumber: row.userPhoneNumber } : {}),
    authenticators: (await reads.findBy('authenticators', 'userId', row.id)).map(renderAuthenticator),
    apiKeys: (await reads.findBy('apiKeys', 'userId', row.id)).map(renderApiKey),
    userTags: (await reads.findBy('userTags', 'organizationId', row.organizationId))
      .filter((tag) => tag.userIds.includes(row.id))
      .map((tag) => tag.id),
    oauthProviders: (await reads.findBy('oauthProviders', 'userId', row.id)).map(renderOauthProvider),
    ...times(row),
  }
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
