import type { AddressFormat, Curve, SubOrgFilterType } from './enums.ts'
import type {
  Activity,
  ApiKey,
  Authenticator,
  PaginationOptions,
  Policy,
  PolicyEvaluation,
  Timestamp,
  User,
  UserTag,
  Wallet,
  WalletAccount,
} from './resources.ts'

/** Request and response of every query, keyed by its path under `/public/v1/query/`. */
export interface QueryMap {
  list_suborgs: {
    request: {
      organizationId: string
      filterType?: SubOrgFilterType
      filterValue?: string
      paginationOptions?: PaginationOptions
    }
    response: { organizationIds: string[] }
  }
  get_authenticator: {
    request: { organizationId: string; authenticatorId: string }
    response: { authenticator: Authenticator }
  }
  get_policy_evaluations: {
    request: { organizationId: string; activityId: string }
    response: { policyEvaluations: PolicyEvaluation[] }
  }
  list_users: {
    request: { organizationId: string }
    response: { users: User[] }
  }
  // ---- extensions ----
  whoami: {
    request: { organizationId: string }
    response: { organizationId: string; organizationName: string; userId: string; username: string }
  }
  get_user: {
    request: { organizationId: string; userId: string }
    response: { user: User }
  }
  get_wallet: {
    request: { organizationId: string; walletId: string }
    response: { wallet: Wallet }
  }
  list_wallets: {
    request: { organizationId: string }
    response: { wallets: Wallet[] }
  }
  list_wallet_accounts: {
    request: {
      organizationId: string
      walletId?: string
      /** Adds each account's `walletDetails` (what the published clients group wallets by). */
      includeWalletDetails?: boolean
      paginationOptions?: PaginationOptions
    }
    response: { accounts: (WalletAccount & { walletDetails?: Wallet })[] }
  }
  get_activity: {
    request: { organizationId: string; activityId: string }
    response: { activity: Activity }
  }
  list_user_tags: {
    request: { organizationId: string }
    response: { userTags: UserTag[] }
  }
  get_api_keys: {
    request: { organizationId: string; userId?: string }
    response: { apiKeys: ApiKey[] }
  }
  get_policy: {
    request: { organizationId: string; policyId: string }
    response: { policy: Policy }
  }
  list_policies: {
    request: { organizationId: string }
    response: { policies: Policy[] }
  }
  get_private_key: {
    request: { organizationId: string; privateKeyId: string }
    response: { privateKey: PrivateKey }
  }
  list_private_keys: {
    request: { organizationId: string }
    response: { privateKeys: PrivateKey[] }
  }
}

/** A standalone private key (`create_private_keys`, `import_private_key`). */
export interface PrivateKey {
  privateKeyId: string
  publicKey: string
  privateKeyName: string
  curve: Curve
  addresses: { format: AddressFormat; address: string }[]
  privateKeyTags: string[]
  createdAt: Timestamp
  updatedAt: Timestamp
  exported: boolean
  imported: boolean
}

export type QueryPath = keyof QueryMap
export type QueryRequest<P extends QueryPath> = QueryMap[P]['request']
export type QueryResponse<P extends QueryPath> = QueryMap[P]['response']

export const QUERY_PATHS: readonly QueryPath[] = [
  'list_suborgs',
  'get_authenticator',
  'get_policy_evaluations',
  'list_users',
  'whoami',
  'get_user',
  'get_wallet',
  'list_wallets',
  'list_wallet_accounts',
  'get_activity',
  'list_user_tags',
  'get_api_keys',
  'get_policy',
  'list_policies',
  'get_private_key',
  'list_private_keys',
]

export const PAGINATION = { minLimit: 1, maxLimit: 100, defaultLimit: 10 } as const
