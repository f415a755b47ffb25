import type {
  AccountSpec,
  ActivityStatus,
  ApiKeyCurve,
  AuthenticatorTransport,
  CredentialType,
  PolicyOutcome,
  ProxySettings,
} from '@latchkey/protocol'

/**
 * The service's data model. Every record is a plain JSON object, immutable once stored (the store
 * freezes it): change one with `tx.put(table, { ...record, field })`. Times are epoch milliseconds.
 */
export interface Row {
  id: string
  createdAt: number
  updatedAt: number
}

export interface OrganizationRow extends Row {
  name: string
  /** Set on sub-organizations: the organization that created it. */
  parentOrganizationId?: string
  rootUserIds: string[]
  rootQuorumThreshold: number
  disableEmailRecovery?: boolean
  disableEmailAuth?: boolean
  disableSmsAuth?: boolean
  disableOtpEmailAuth?: boolean
}

export interface UserRow extends Row {
  organizationId: string
  userName: string
  userEmail?: string
  userPhoneNumber?: string
}

export interface ApiKeyRow extends Row {
  organizationId: string
  userId: string
  name: string
  /** Lowercase hex, as carried in stamps (compressed for P-256/secp256k1, raw 32 bytes for ed25519). */
  publicKey: string
  curve: ApiKeyCurve
  credentialType: CredentialType
  /** Lifetime in seconds from `createdAt`; absent for keys that never expire. */
  expirationSeconds?: string
}

export interface AuthenticatorRow extends Row {
  organizationId: string
  userId: string
  name: string
  /** base64url credential id, as the browser reports it. */
  credentialId: string
  /** base64url COSE public key, as @simplewebauthn stores it. */
  cosePublicKey: string
  /** Hex of the public key for the `credential.publicKey` field (COSE bytes). */
  publicKeyHex: string
  counter: number
  aaguid: string
  model: string
  attestationType: string
  transports: AuthenticatorTransport[]
}

export interface OauthProviderRow extends Row {
  organizationId: string
  userId: string
  providerName: string
  issuer: string
  audience: string
  subject: string
}

export interface UserTagRow extends Row {
  organizationId: string
  name: string
  userIds: string[]
}

export interface WalletRow extends Row {
  organizationId: string
  name: string
  /** The mnemonic, sealed with the master key. */
  sealedMnemonic: string
  mnemonicLength: number
  exported: boolean
  imported: boolean
}

export interface WalletAccountRow extends Row, AccountSpec {
  organizationId: string
  walletId: string
  address: string
  publicKey: string
  /** The account's private key, sealed (signing opens it instead of re-deriving from the mnemonic). */
  sealedPrivateKey: string
}

export interface ActivityRow extends Row {
  organizationId: string
  /** Path under /public/v1/submit/ (`create_wallet` ...). */
  path: string
  type: string
  status: ActivityStatus
  /** The validated parameters, echoed as `<name>Intent`. */
  intent: Record<string, unknown>
  result?: Record<string, unknown>
  failure?: { code: number; message: string; details: Record<string, unknown> }
  /** sha256 hex of the stamping credential's id and the submitted body bytes. */
  fingerprint: string
  /** Who submitted it (the handler runs as this user when consensus completes). */
  userId: string
  credentialId: string
  /** Organization of the submitting user (differs from `organizationId` for parent-org calls). */
  callerOrganizationId: string
}

export interface VoteRow extends Row {
  organizationId: string
  activityId: string
  userId: string
  selection: 'VOTE_SELECTION_APPROVED' | 'VOTE_SELECTION_REJECTED'
  message: string
  publicKey: string
  signature: string
  scheme: string
}

export interface PolicyRow extends Row {
  organizationId: string
  name: string
  effect: 'EFFECT_ALLOW' | 'EFFECT_DENY'
  /** Policy-language expressions, '' when absent (checked by the parser when stored). */
  condition: string
  consensus: string
  notes: string
}

export interface PolicyEvaluationRow extends Row {
  organizationId: string
  activityId: string
  voteId: string
  outcomes: { policyId?: string; outcome: PolicyOutcome }[]
}

/** Auth-proxy configuration of a parent organization (written by the proxy plugin). */
export interface ProxyConfigRow extends Row {
  organizationId: string
  enabled: boolean
  settings: ProxySettings
  proxyUserId?: string
  /** The proxy API key's P-256 private key, sealed. */
  sealedProxyPrivateKey?: string
}

export interface FiatCredentialRow extends Row {
  organizationId: string
  onrampProvider: string
  projectId?: string
  publishableApiKey: string
  /** Already encrypted by the client; sealed again at rest. */
  sealedSecretApiKey: string
  sealedPrivateApiKey?: string
  sandboxMode: boolean
}

/** A standalone private key (`create_private_keys`, `import_private_key`), sealed at rest. */
export interface PrivateKeyRow extends Row {
  organizationId: string
  name: string
  curve: AccountSpec['curve']
  /** secp256k1: 33-byte compressed hex; ed25519: 32-byte hex. */
  publicKey: string
  sealedPrivateKey: string
  addresses: { format: AccountSpec['addressFormat']; address: string }[]
  privateKeyTags: string[]
  exported: boolean
  imported: boolean
}

/** A pending `init_import_wallet`: the target key the client encrypts its mnemonic to. */
export interface ImportTargetRow extends Row {
  organizationId: string
  userId: string
  sealedTargetPrivateKey: string
  targetPublic: string
}

/** Service-wide secrets and the dev bootstrap (one row, id `service`). */
export interface ServiceRow extends Row {
  sealedSignerKey: string
  signerPublicKey: string
  sealedSessionKey: string
  sessionPublicKey: string
  devOrganizationId: string
  devUserId: string
  devApiKeyId: string
  sealedDevApiPrivateKey: string
  devApiPublicKey: string
  authProxyConfigId?: string
}

/** Free-form rows for plugins (OTP challenges, OIDC replay guards, outbox ...), keyed by `kind`. */
export interface PluginRow extends Row {
  kind: string
  organizationId?: string
  data: Record<string, unknown>
}

// Master-key rotation
/** A version of the master key: its number and a check value that recognises the key (never the key). */
export interface MasterKeyVersion {
  version: number
  /** HMAC-SHA256 of a fixed label under the key, hex: tells which key is which version. */
  check: string
  /** Set when a rotation re-sealed every secret away from this version: it is needed no more. */
  retiredAt?: number
}

/**
 * The master key's versions (one row, id `keyring`): which one seals (`activeVersion`), which can
 * still be found in sealed values, and the progress of a rotation that re-seals them.
 */
export interface KeyringRow extends Row {
  keys: MasterKeyVersion[]
  /** The version new secrets are sealed under. */
  activeVersion: number
  /** A rotation under way: every secret sealed under another version is re-sealed under `to`. */
  rotation?: {
    to: number
    /** The table being walked and the last id re-sealed in it (ids sort the same on every backend). */
    table: string
    afterId: string
    /** Sealed values re-sealed so far. */
    resealed: number
    /** Which walk over the tables this is (the last one finds nothing left to re-seal). */
    pass: number
    /** Sealed values this pass re-sealed. */
    passResealed: number
    startedAt: number
  }
  /** When the last rotation finished: only `activeVersion` is needed from then on. */
  rotatedAt?: number
}

export interface Tables {
  service: ServiceRow
  organizations: OrganizationRow
  users: UserRow
  apiKeys: ApiKeyRow
  authenticators: AuthenticatorRow
  oauthProviders: OauthProviderRow
  userTags: UserTagRow
  wallets: WalletRow
  walletAccounts: WalletAccountRow
  privateKeys: PrivateKeyRow
  activities: ActivityRow
  votes: VoteRow
  policyEvaluations: PolicyEvaluationRow
  policies: PolicyRow
  proxyConfigs: ProxyConfigRow
  fiatCredentials: FiatCredentialRow
  importTargets: ImportTargetRow
  pluginRows: PluginRow
  keyring: KeyringRow
}

export type TableName = keyof Tables

/** Fields with a lookup index, per table: `store.findBy(table, field, value)` uses them. */
export const INDEXES: { [T in TableName]: (keyof Tables[T] & string)[] } = {
  service: [],
  organizations: ['parentOrganizationId'],
  users: ['organizationId'],
  apiKeys: ['publicKey', 'userId', 'organizationId'],
  authenticators: ['credentialId', 'userId', 'organizationId'],
  oauthProviders: ['userId', 'subject', 'organizationId'],
  userTags: ['organizationId'],
  wallets: ['organizationId'],
  walletAccounts: ['walletId', 'address', 'organizationId'],
  privateKeys: ['organizationId'],
  activities: ['organizationId', 'fingerprint'],
  votes: ['activityId'],
  policyEvaluations: ['activityId'],
  policies: ['organizationId'],
  proxyConfigs: ['organizationId'],
  fiatCredentials: ['organizationId'],
  importTargets: ['userId'],
  pluginRows: ['kind'],
  keyring: [],
}

export const TABLE_NAMES = Object.keys(INDEXES) as TableName[]

/** One change of a commit: `record` null deletes. */
export type Op = [table: TableName, id: string, record: Row | null]

/** Every table as a plain object, for snapshots. */
export type Snapshot = { [T in TableName]?: Record<string, Tables[T]> }
