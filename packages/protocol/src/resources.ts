import type {
  ActivityStatus,
  AddressFormat,
  ApiKeyCurve,
  AuthenticatorTransport,
  CredentialType,
  Curve,
  PathFormat,
  PolicyOutcome,
} from './enums.ts'

/** Resource timestamps are `{ seconds, nanos }` strings. */
export interface Timestamp {
  seconds: string
  nanos: string
}

export interface Credential {
  publicKey: string
  type: CredentialType
}

export interface Authenticator {
  authenticatorId: string
  authenticatorName: string
  credentialId: string
  aaguid: string
  model: string
  attestationType: string
  transports: AuthenticatorTransport[]
  credential: Credential
  createdAt: Timestamp
  updatedAt: Timestamp
}

export interface ApiKey {
  apiKeyId: string
  apiKeyName: string
  credential: Credential
  /** Lifetime in seconds from creation; absent for keys that never expire. */
  expirationSeconds?: string
  createdAt: Timestamp
  updatedAt: Timestamp
}

export interface OauthProvider {
  providerId: string
  providerName: string
  issuer: string
  audience: string
  subject: string
  createdAt: Timestamp
  updatedAt: Timestamp
}

export interface User {
  userId: string
  userName: string
  userEmail?: string
  userPhoneNumber?: string
  authenticators: Authenticator[]
  apiKeys: ApiKey[]
  userTags: string[]
  oauthProviders: OauthProvider[]
  createdAt: Timestamp
  updatedAt: Timestamp
}

export interface UserTag {
  userTagId: string
  userTagName: string
  userIds: string[]
  createdAt: Timestamp
  updatedAt: Timestamp
}

export interface AccountSpec {
  curve: Curve
  pathFormat: PathFormat
  path: string
  addressFormat: AddressFormat
}

export interface Wallet {
  walletId: string
  walletName: string
  createdAt: Timestamp
  updatedAt: Timestamp
  /** True once the mnemonic or one of its private keys has been exported. */
  exported: boolean
  imported: boolean
}

export interface WalletAccount extends AccountSpec {
  walletAccountId: string
  organizationId: string
  walletId: string
  address: string
  /** Compressed public key hex (secp256k1: 33 bytes; ed25519: 32 bytes). */
  publicKey: string
  createdAt: Timestamp
  updatedAt: Timestamp
}

export interface PolicyEvaluation {
  id: string
  activityId: string
  organizationId: string
  voteId: string
  policyEvaluations: { policyId?: string; outcome?: PolicyOutcome }[]
  createdAt: Timestamp
}

export type PolicyEffect = 'EFFECT_ALLOW' | 'EFFECT_DENY'

/** A policy of an organization: `condition` and `consensus` are policy-language expressions ('' = none). */
export interface Policy {
  policyId: string
  policyName: string
  effect: PolicyEffect
  condition: string
  consensus: string
  notes: string
  createdAt: Timestamp
  updatedAt: Timestamp
}

export interface PolicyParams {
  policyName: string
  effect: PolicyEffect
  /** Which activities the policy applies to; absent: every activity. */
  condition?: string
  /** Who must approve; absent: the submitter alone. */
  consensus?: string
  notes: string
}

/** A user created by `create_users`; `userTags` are user tag ids. */
export interface UserParams {
  userName: string
  userEmail?: string
  userPhoneNumber?: string
  apiKeys: ApiKeyParams[]
  authenticators: AuthenticatorParams[]
  /** `OauthProviderParamsV2` only in the versions that take it. */
  oauthProviders: (OauthProviderParams | OauthProviderParamsV2)[]
  userTags: string[]
}

/** The seed leaves vote items open; these are the public service's fields. */
export interface Vote {
  id: string
  userId: string
  user: { userId: string; userName: string }
  activityId: string
  selection: 'VOTE_SELECTION_APPROVED' | 'VOTE_SELECTION_REJECTED'
  message: string
  publicKey: string
  signature: string
  scheme: string
  createdAt: Timestamp
}

export interface Activity<Intent = Record<string, unknown>, Result = Record<string, unknown>> {
  id: string
  organizationId: string
  status: ActivityStatus
  type: string
  intent: Intent
  result: Result
  votes: Vote[]
  fingerprint: string
  canApprove: boolean
  canReject: boolean
  createdAt: Timestamp
  updatedAt: Timestamp
  /** Present on failed activities: the error that failed it. */
  failure?: { code: number; message: string; details: Record<string, unknown> }
}

export interface ApiKeyParams {
  apiKeyName: string
  publicKey: string
  curveType: ApiKeyCurve
  expirationSeconds?: string
}

export interface Attestation {
  credentialId: string
  clientDataJson: string
  attestationObject: string
  transports: AuthenticatorTransport[]
}

export interface AuthenticatorParams {
  authenticatorName: string
  challenge: string
  attestation: Attestation
}

export interface OauthProviderParams {
  providerName: string
  oidcToken: string
}

/** An OIDC identity named without a token: its issuer, subject and audience (client id). */
export interface OidcClaims {
  iss: string
  sub: string
  aud: string
}

/**
 * An OAuth provider in the newer activity versions (`CREATE_USERS_V4`,
 * `CREATE_SUB_ORGANIZATION_V8`, `CREATE_OAUTH_PROVIDERS_V2`): an `oidcToken` the service verifies,
 * or `oidcClaims` the caller vouches for, exactly one of the two.
 */
export interface OauthProviderParamsV2 {
  providerName: string
  oidcToken?: string
  oidcClaims?: OidcClaims
}

export interface RootUserParams {
  userName: string
  userEmail?: string
  userPhoneNumber?: string
  apiKeys: ApiKeyParams[]
  authenticators: AuthenticatorParams[]
  /** `OauthProviderParamsV2` only in the versions that take it. */
  oauthProviders: (OauthProviderParams | OauthProviderParamsV2)[]
}

export interface WalletParams {
  walletName: string
  accounts: AccountSpec[]
  mnemonicLength?: number
}

export interface PaginationOptions {
  limit?: string
  before?: string
  after?: string
}
