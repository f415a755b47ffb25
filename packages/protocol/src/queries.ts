import type { SessionProfile, SpendingLimit } from './activities.ts'
import type { AddressFormat, Curve, SubOrgFilterType, TxStatus } from './enums.ts'
import type { ImportedUser } from './importUser.ts'
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
import type { WebhookDelivery, WebhookEndpoint } from './webhooks.ts'

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
  // ---- sending ----
  /** Where a send stands; poll until `txStatus` is final (`TX_STATUSES_FINAL`). */
  get_send_transaction_status: {
    request: { organizationId: string; sendTransactionStatusId: string }
    response: SendTransactionStatus
  }
  /** The next outer nonce of `address` and/or its delegate contract nonce on `caip2`. */
  get_nonces: {
    request: {
      organizationId: string
      address: string
      caip2: string
      /** @default false */
      nonce?: boolean
      /** @default false */
      gasStationNonce?: boolean
    }
    /** Decimal strings, each present only when asked for. */
    response: { nonce?: string; gasStationNonce?: string }
  }
  /**
   * Latchkey's own: what the service sends on each chain it has a node for, for this organization
   * (EIP-5792's `wallet_getCapabilities` reports it). `gasSponsorship`: `sponsor: true` is taken on
   * that chain; `atomicBatch`: several calls run as one transaction (EIP-7702 through the delegate).
   */
  latchkey_get_send_capabilities: {
    request: { organizationId: string }
    response: { chains: SendCapabilities[] }
  }
  // ---- wing: spending limits (issue 37) ----
  latchkey_list_spending_limits: {
    request: { organizationId: string }
    response: { spendingLimits: SpendingLimit[] }
  }
  get_session_profile: {
    request: { organizationId: string; sessionProfileId: string }
    response: { sessionProfile: SessionProfile }
  }
  get_session_profiles: {
    request: { organizationId: string }
    response: { sessionProfiles: SessionProfile[] }
  }
  // ---- wing: MFA (issue 38) ----
  get_mfa_policies: {
    request: { organizationId: string; userId: string }
    response: { mfaPolicies: import('./mfa.ts').MfaPolicy[] }
  }
  get_mfa_policy: {
    request: { organizationId: string; userId: string; mfaPolicyId: string }
    response: { mfaPolicy: import('./mfa.ts').MfaPolicy }
  }
  get_mfa_status: {
    request: { organizationId: string; activityId: string; userId?: string }
    response: { mfaStatuses: import('./mfa.ts').MfaStatus[] }
  }
  /** A user's second factors and how many unused recovery codes they hold (Latchkey). */
  latchkey_get_mfa_factors: {
    request: { organizationId: string; userId: string }
    response: { factors: import('./mfa.ts').MfaFactor[]; recoveryCodesRemaining: number }
  }
  // ---- wing: webhooks (issue 39) ----
  list_webhook_endpoints: {
    request: { organizationId: string }
    response: { webhookEndpoints: WebhookEndpoint[] }
  }
  /**
   * The deliveries to this organization's endpoints (of its events and its sub-organizations'),
   * newest first, each with the signed request last sent (Latchkey). `paginationOptions.after`:
   * the last `deliveryId` of the page before.
   */
  latchkey_list_webhook_deliveries: {
    request: {
      organizationId: string
      endpointId?: string
      eventId?: string
      paginationOptions?: PaginationOptions
    }
    response: { webhookDeliveries: WebhookDelivery[] }
  }
  // ---- wing: import and pregeneration (issue 40) ----
  /**
   * Latchkey's own: which of these external ids (at most 100) the organization imported, with
   * accounts that still exist; the others are absent from the answer. A rerun of
   * `latchkey-service import` asks before encrypting and submitting a line. Root users of a
   * top-level organization only.
   */
  latchkey_get_imported_users: {
    request: { organizationId: string; externalIds: string[] }
    response: { importedUsers: ImportedUser[] }
  }
}

/** What the service sends on one chain (`latchkey_get_send_capabilities`). */
export interface SendCapabilities {
  /** CAIP-2 chain id, e.g. `eip155:31337`. */
  caip2: string
  gasSponsorship: boolean
  atomicBatch: boolean
}

/**
 * A revert frame, outermost first: the published `v1RevertChainEntry`. `errorType` is `native`
 * (`Error(string)`, `Panic(uint256)` or a bare revert), `custom` (a contract's own error, decoded
 * when the service knows its signature) or `unknown` (the selector and data as they came).
 */
export interface RevertChainEntry {
  /** Contract that reverted, when known. */
  address?: string
  errorType?: 'native' | 'custom' | 'unknown'
  /** What a person reads, e.g. `ERC20InsufficientBalance(0xab…, 0, 1)` or `Error: too late`. */
  displayMessage?: string
  unknown?: { selector?: string; data?: string }
  native?: {
    nativeType?: 'error_string' | 'panic' | 'execution_reverted'
    message?: string
    panicCode?: string
  }
  custom?: { errorName?: string; paramsJson?: string }
}

/** Why a Solana send failed (the published `v1SolanaFailureDetails`). */
export interface SolanaFailureDetails {
  /** Where it failed: `simulation`, `preflight` or `execution`. */
  source?: string
  rpcCode?: number
  rpcMessage?: string
  transactionErrorJson?: string
  logs?: string[]
}

/** Why a send failed (the published `v1TxError`). */
export interface TxError {
  message?: string
  revertChain?: RevertChainEntry[]
  eth?: { revertChain?: RevertChainEntry[] }
  solana?: SolanaFailureDetails
}

/** An Ethereum receipt's bounded summary (an extension: the published type has only `txHash`). */
export interface EthReceiptSummary {
  blockNumber: string
  blockHash: string
  gasUsed: string
  effectiveGasPrice: string
  /** `success` or `reverted`, as the node reports. */
  status: 'success' | 'reverted'
}

/** `get_send_transaction_status`'s answer, the published `v1GetSendTransactionStatusResponse`. */
export interface SendTransactionStatus {
  txStatus: TxStatus
  eth?: { txHash?: string; receipt?: EthReceiptSummary }
  solana?: { signature?: string; slot?: string }
  /** The error's message, as the older clients read it. */
  txError?: string
  error?: TxError
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

/** What the registry states about one query. */
export interface QueryFacts {
  /** The auth proxy's own user may read it: the account lookups, nothing else. */
  proxyUser: boolean
}

/** Every query's facts, the one place they are kept; a query path without its entry does not compile. */
export const QUERIES: { readonly [P in QueryPath]: QueryFacts } = {
  list_suborgs: { proxyUser: true },
  get_authenticator: { proxyUser: false },
  get_policy_evaluations: { proxyUser: false },
  list_users: { proxyUser: false },
  whoami: { proxyUser: false },
  get_user: { proxyUser: false },
  get_wallet: { proxyUser: false },
  list_wallets: { proxyUser: false },
  list_wallet_accounts: { proxyUser: false },
  get_activity: { proxyUser: false },
  list_user_tags: { proxyUser: false },
  get_api_keys: { proxyUser: false },
  get_policy: { proxyUser: false },
  list_policies: { proxyUser: false },
  get_private_key: { proxyUser: false },
  list_private_keys: { proxyUser: false },
  get_send_transaction_status: { proxyUser: false },
  get_nonces: { proxyUser: false },
  latchkey_get_send_capabilities: { proxyUser: false },
  // ---- wing: spending limits (issue 37) ----
  latchkey_list_spending_limits: { proxyUser: false },
  get_session_profile: { proxyUser: false },
  get_session_profiles: { proxyUser: false },
  // ---- wing: MFA (issue 38) ----
  get_mfa_policies: { proxyUser: false },
  get_mfa_policy: { proxyUser: false },
  get_mfa_status: { proxyUser: false },
  latchkey_get_mfa_factors: { proxyUser: false },
  // ---- wing: webhooks (issue 39) ----
  list_webhook_endpoints: { proxyUser: false },
  latchkey_list_webhook_deliveries: { proxyUser: false },
  // ---- wing: import and pregeneration (issue 40) ----
  latchkey_get_imported_users: { proxyUser: false },
}

export const QUERY_PATHS = Object.keys(QUERIES) as QueryPath[]

export const PAGINATION = { minLimit: 1, maxLimit: 100, defaultLimit: 10 } as const
