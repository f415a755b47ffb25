import type { ClientSignature } from './clientSignature.ts'
import type {
  AddressFormat,
  Curve,
  HashFunction,
  MnemonicLength,
  OAuth2Provider,
  OtpType,
  PayloadEncoding,
  TransactionType,
} from './enums.ts'
import type { ImportUserParams, ImportUserResult } from './importUser.ts'
import type {
  AccountSpec,
  Activity,
  ApiKeyParams,
  AuthenticatorParams,
  PolicyEffect,
  PolicyParams,
  RootUserParams,
  UserParams,
  WalletParams,
} from './resources.ts'
import type { WebhookEndpoint, WebhookSubscription } from './webhooks.ts'

/** An OAuth authorization code (PKCE) to exchange at the provider: `oauth2_authenticate`, direct or through the proxy. */
export interface OAuth2AuthenticateParameters {
  provider: OAuth2Provider
  authCode: string
  redirectUri: string
  codeVerifier: string
  /** Lowercase hex SHA-256 of the session public key hex. */
  nonce: string
  clientId: string
}

/** One call of an `eth_send_transaction` batch. */
export interface EthCall {
  /** Recipient, 0x-prefixed 20-byte hex. */
  to: string
  /** Wei as a decimal integer string. @default "0" */
  value?: string
  /** Call data, 0x-prefixed hex. @default "0x" */
  data?: string
}

/**
 * `eth_send_transaction` V2. Unsponsored with one call: an EIP-1559 transaction from `from`.
 * Sponsored (any number of calls): `from` signs an EIP-7702 authorization to the chain's delegate
 * contract and an EIP-712 `BatchExecution`, and the organization's sponsor submits and pays for one
 * type-4 transaction that runs the calls atomically. Unsponsored with several calls: `from`
 * delegates to the same contract and submits the batch itself, paying the gas.
 */
export interface EthSendTransactionParameters {
  /** A wallet account or private key address (not a private key id). */
  from: string
  /** `eip155:<chainId>`; the service must have an RPC endpoint for it. */
  caip2: string
  /** @default false */
  sponsor?: boolean
  /** Between 1 and 50 calls, run in order. */
  calls: EthCall[]
  /** Outer transaction nonce, decimal; assigned by the service when omitted. */
  nonce?: string
  /** Outer transaction gas limit, decimal; estimated when omitted. */
  gasLimit?: string
  /** Wei per gas, decimal; from the node when omitted. */
  maxFeePerGas?: string
  /** Wei per gas, decimal; from the node when omitted. */
  maxPriorityFeePerGas?: string
  /** Unix seconds after which the `BatchExecution` is void (batches only). */
  deadline?: string
  /** The delegate contract's nonce for `from` (batches only); read from the chain when omitted. */
  gasStationNonce?: string
}

/** `ACTIVITY_TYPE_ETH_SEND_TRANSACTION` (V1): one call, inline. */
export interface EthSendTransactionParametersV1
  extends Omit<EthSendTransactionParameters, 'calls'>,
    EthCall {}

/** `sol_send_transaction` V2. */
export interface SolSendTransactionParameters {
  /** Hex wire transaction (0x optional) with zeroed signature slots. */
  unsignedTransaction: string
  /**
   * Addresses the service signs with, in the transaction's signer order; they must cover every
   * required signer except the fee payer slot a sponsor fills.
   */
  signWiths: string[]
  /** The organization's Solana sponsor becomes the fee payer (first signer). @default false */
  sponsor?: boolean
  /** `solana:<genesis hash prefix>` or the aliases `solana:mainnet`, `solana:devnet`. */
  caip2: string
  /** Used as is when given; a fresh one is fetched when omitted and sponsored. */
  recentBlockhash?: string
}

/** `ACTIVITY_TYPE_SOL_SEND_TRANSACTION` (V1): one signer. */
export interface SolSendTransactionParametersV1 extends Omit<SolSendTransactionParameters, 'signWiths'> {
  signWith: string
}

/** Parameters and results of every activity, keyed by its path under `/public/v1/submit/`. */
/**
 * Whose signatures a spending limit counts (issue 37): one wallet account, one user, one API key,
 * or the sessions of one session profile.
 */
export type SpendingLimitScope =
  | { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT'; address: string }
  | { type: 'SPENDING_LIMIT_SCOPE_USER'; userId: string }
  | { type: 'SPENDING_LIMIT_SCOPE_API_KEY'; apiKeyId: string }
  /** Every session issued under this session profile (a login naming `sessionProfileId`). */
  | { type: 'SPENDING_LIMIT_SCOPE_SESSION_PROFILE'; sessionProfileId: string }

/** How long a spend counts against a limit. */
export type SpendingLimitPeriod = 'PERIOD_HOUR' | 'PERIOD_DAY' | 'PERIOD_WEEK' | 'PERIOD_30_DAYS'

/**
 * Rolling: a spend counts for one period after it was signed. Fixed: periods follow each other
 * from `startTimestampMs` (epoch ms, a decimal string), and each starts at zero.
 */
export type SpendingLimitWindow =
  | { type: 'SPENDING_LIMIT_WINDOW_ROLLING'; period: SpendingLimitPeriod }
  | { type: 'SPENDING_LIMIT_WINDOW_FIXED'; period: SpendingLimitPeriod; startTimestampMs: string }

/**
 * What a limit counts: a chain's native unit (wei, lamports) or one token, by CAIP-2 chain id: an
 * ERC-20 by its contract, an SPL token (Token or Token-2022 program) by its mint.
 */
export type SpendingLimitAsset =
  | { type: 'SPENDING_LIMIT_ASSET_NATIVE'; caip2: string }
  | { type: 'SPENDING_LIMIT_ASSET_ERC20'; caip2: string; contract: string }
  | { type: 'SPENDING_LIMIT_ASSET_SPL'; caip2: string; mint: string }

/**
 * `create_session_profile`'s parameters (the published `v1CreateSessionProfileIntent`, issue 37).
 * `scope` is a condition in the policy language (the keywords of a policy `condition`:
 * `activity`, `wallet`, `wallet_account`, `eth`, `solana`): a session issued under the profile may
 * make an activity only when it holds, and never one that manages policies, limits, profiles,
 * users, credentials, sessions or the organization, exports or imports a key, or approves an
 * activity (docs/agents.md).
 */
export interface SessionProfileParameters {
  sessionProfileName: string
  scope: string
  /** The sessions' lifetime (decimal seconds), over what the login asks for. */
  expirationSeconds?: string
  notes?: string
}

/** A session profile as `get_session_profile(s)` answer it (the published `v1SessionProfile`). */
export interface SessionProfile extends SessionProfileParameters {
  sessionProfileId: string
  createdAt: { seconds: string; nanos: string }
  updatedAt: { seconds: string; nanos: string }
}

/** `latchkey_create_spending_limit`'s parameters. */
export interface SpendingLimitParameters {
  spendingLimitName: string
  scope: SpendingLimitScope
  window: SpendingLimitWindow
  asset: SpendingLimitAsset
  /** The cap per window, a decimal string of the asset's smallest unit (wei, lamports, token units). */
  amount: string
  /** Where the asset may go (recipients, spenders): any address when absent or empty. */
  allowedDestinations?: string[]
}

/** A spending limit as `latchkey_list_spending_limits` answers it, with its window's use now. */
export interface SpendingLimit extends Required<SpendingLimitParameters> {
  spendingLimitId: string
  /** Spent in the current window, decimal. */
  used: string
  /** `amount - used` (never below zero), decimal. */
  remaining: string
  /** When some of `used` frees next (epoch ms, decimal), absent when nothing is used. */
  nextReleaseTimestampMs?: string
  createdAt: { seconds: string; nanos: string }
  updatedAt: { seconds: string; nanos: string }
}

/**
 * `details` of a 429 `SPENDING_LIMIT_EXCEEDED` (beside `retryAfterSeconds` when enough frees later):
 * which limit refused the signature, and its window's figures, all decimal strings.
 */
export interface SpendingLimitExceededDetails {
  spendingLimitId: string
  /** The cap per window. */
  limit: string
  used: string
  remaining: string
  /** What the refused signature would have spent. */
  requested: string
  /** When enough frees for it (epoch ms); absent when it alone is over the cap. */
  freesAtTimestampMs?: string
}

export interface ActivityMap {
  sign_raw_payloads: {
    parameters: {
      signWith: string
      payloads: string[]
      encoding: PayloadEncoding
      hashFunction: HashFunction
    }
    result: { signatures: { r: string; s: string; v: string }[] }
  }
  /** One payload, the published clients' `signMessage` (`ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2`). */
  sign_raw_payload: {
    parameters: {
      signWith: string
      payload: string
      encoding: PayloadEncoding
      hashFunction: HashFunction
    }
    result: { r: string; s: string; v: string }
  }
  /**
   * Signs an unsigned transaction (hex, 0x optional) as the `signWith` account; `signedTransaction`
   * is hex without 0x. Ethereum: legacy (EIP-155), EIP-2930, EIP-1559, EIP-7702. Solana: the wire
   * transaction (legacy or v0 message) with empty signature slots; `signWith` fills its own.
   */
  sign_transaction: {
    parameters: { signWith: string; type: TransactionType; unsignedTransaction: string }
    result: { signedTransaction: string }
  }
  /** `OTP_LOGIN_V2` requires `clientSignature`, as the published object. */
  otp_login: {
    parameters: {
      verificationToken: string
      publicKey: string
      expirationSeconds?: string
      invalidateExisting?: boolean
      /** The seed's hex signature over the token, or the published clients' object. */
      clientSignature?: string | ClientSignature
      /** The session profile whose scope confines the session (issue 37). */
      sessionProfileId?: string
    }
    result: { session: string }
  }
  update_user_tag: {
    parameters: { userTagId: string; newUserTagName?: string; addUserIds: string[]; removeUserIds: string[] }
    result: { userTagId: string }
  }
  delete_wallets: {
    parameters: { walletIds: string[]; deleteWithoutExport?: boolean }
    result: { walletIds: string[] }
  }
  export_wallet_account: {
    parameters: { address: string; targetPublicKey: string }
    result: { address: string; exportBundle: string }
  }
  create_read_only_session: {
    parameters: Record<string, never>
    result: {
      organizationId: string
      organizationName: string
      userId: string
      username: string
      session: string
      sessionExpiry: string
    }
  }
  update_user_name: {
    parameters: { userId: string; userName: string }
    result: { userId: string }
  }
  init_import_wallet: {
    parameters: { userId: string }
    result: { importBundle: string }
  }
  import_wallet: {
    parameters: { userId: string; walletName: string; encryptedBundle: string; accounts: AccountSpec[] }
    result: { walletId: string; addresses: string[] }
  }
  create_wallet: {
    parameters: { walletName: string; accounts: AccountSpec[]; mnemonicLength?: MnemonicLength | number }
    result: { walletId: string; addresses: string[] }
  }
  create_wallet_accounts: {
    parameters: { walletId: string; accounts: AccountSpec[]; persist?: boolean }
    result: { addresses: string[] }
  }
  create_sub_organization: {
    parameters: {
      subOrganizationName: string
      rootUsers: RootUserParams[]
      rootQuorumThreshold: number
      wallet?: WalletParams
      disableEmailRecovery?: boolean
      disableEmailAuth?: boolean
      disableSmsAuth?: boolean
      disableOtpEmailAuth?: boolean
      verificationToken?: string
      /**
       * With `verificationToken` bound to a key at `otp_verify`: that key's consent to this sign-up
       * (a `USAGE_TYPE_SIGNUP` message listing exactly the new account's credentials), or the
       * seed's hex signature over the token.
       */
      clientSignature?: string | ClientSignature
    }
    result: {
      subOrganizationId: string
      wallet?: { walletId: string; addresses: string[] }
      rootUserIds: string[]
    }
  }
  create_fiat_on_ramp_credential: {
    parameters: {
      onrampProvider: string
      projectId?: string
      publishableApiKey: string
      encryptedSecretApiKey: string
      encryptedPrivateApiKey?: string
      sandboxMode?: boolean
    }
    result: { fiatOnRampCredentialId: string }
  }
  create_user_tag: {
    parameters: { userTagName: string; userIds: string[] }
    result: { userTagId: string; userIds: string[] }
  }
  eth_send_raw_transaction: {
    parameters: { signedTransaction: string; caip2: string }
    result: { transactionHash: string }
  }
  // ---- sending: sign, then broadcast and track (`get_send_transaction_status`) ----
  /**
   * Signs and sends calls from `from` (`ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2`; the V1 single-call
   * shape is accepted too). The result's id is polled with `get_send_transaction_status`.
   */
  eth_send_transaction: {
    parameters: EthSendTransactionParameters | EthSendTransactionParametersV1
    result: { sendTransactionStatusId: string }
  }
  /**
   * Signs a Solana wire transaction with every `signWiths` account and sends it
   * (`ACTIVITY_TYPE_SOL_SEND_TRANSACTION_V2`; V1's single `signWith` is accepted too).
   */
  sol_send_transaction: {
    parameters: SolSendTransactionParameters | SolSendTransactionParametersV1
    result: { sendTransactionStatusId: string }
  }
  // ---- beyond the seed: sign-in, export, credentials, votes ----
  /**
   * `INIT_OTP` takes the app name in `emailCustomization`, `INIT_OTP_V2` and `_V3` at the top
   * (`appName`, required); `_V3` also answers the signed key `VERIFY_OTP_V2` encrypts the code to.
   */
  init_otp: {
    parameters: {
      otpType: OtpType
      contact: string
      /** Code length, 6 to 9. @default 6 */
      otpLength?: number
      /** Lifetime of the code in seconds. @default 300 */
      expirationSeconds?: string
      /** `INIT_OTP_V2`/`_V3` only (and required there). */
      appName?: string
      /** `appName` here in `INIT_OTP` only. */
      emailCustomization?: { appName?: string; logoUrl?: string }
      smsCustomization?: { template?: string }
      /**
       * The one-use pass the auth proxy gives an `otp_init` whose CAPTCHA passed (set by the proxy,
       * not by a client): its codes have a send and guess budget of their own.
       */
      captchaPass?: string
    }
    /** `otpEncryptionTargetBundle` in `INIT_OTP_V3`'s `initOtpResultV2` only. */
    result: { otpId: string; otpEncryptionTargetBundle?: string }
  }
  /**
   * `VERIFY_OTP` takes the code (and the key to bind) in clear; `VERIFY_OTP_V2` takes them
   * HPKE-encrypted to `INIT_OTP_V3`'s `otpEncryptionTargetBundle` as `encryptedOtpBundle`.
   */
  verify_otp: {
    parameters:
      | { otpId: string; otpCode: string; publicKey?: string; expirationSeconds?: string }
      | { otpId: string; encryptedOtpBundle: string; expirationSeconds?: string }
    result: { verificationToken: string }
  }
  oauth2_authenticate: {
    parameters: OAuth2AuthenticateParameters
    result: { oidcToken: string }
  }
  oauth_login: {
    parameters: {
      oidcToken: string
      publicKey: string
      expirationSeconds?: string
      invalidateExisting?: boolean
      /** The session profile whose scope confines the session (issue 37). */
      sessionProfileId?: string
    }
    result: { session: string }
  }
  stamp_login: {
    parameters: {
      publicKey: string
      expirationSeconds?: string
      invalidateExisting?: boolean
      /** The session profile whose scope confines the session (issue 37). */
      sessionProfileId?: string
    }
    result: { session: string }
  }
  export_wallet: {
    parameters: { walletId: string; targetPublicKey: string }
    result: { walletId: string; exportBundle: string }
  }
  create_api_keys: {
    parameters: { userId: string; apiKeys: ApiKeyParams[] }
    result: { apiKeyIds: string[] }
  }
  delete_api_keys: {
    parameters: { userId: string; apiKeyIds: string[] }
    result: { apiKeyIds: string[] }
  }
  create_authenticators: {
    parameters: { userId: string; authenticators: AuthenticatorParams[] }
    result: { authenticatorIds: string[] }
  }
  delete_authenticators: {
    parameters: { userId: string; authenticatorIds: string[] }
    result: { authenticatorIds: string[] }
  }
  /** Votes for a pending activity; the response's `activity` is the voted-on activity. */
  approve_activity: {
    parameters: { fingerprint: string }
    result: Record<string, never>
  }
  /** Votes against a pending activity; the response's `activity` is the voted-on activity. */
  reject_activity: {
    parameters: { fingerprint: string }
    result: Record<string, never>
  }
  // ---- policies and users ----
  create_policy: {
    parameters: PolicyParams
    result: { policyId: string }
  }
  create_policies: {
    parameters: { policies: PolicyParams[] }
    result: { policyIds: string[] }
  }
  /** Changes only the fields given. */
  update_policy: {
    parameters: {
      policyId: string
      policyName?: string
      policyEffect?: PolicyEffect
      policyCondition?: string
      policyConsensus?: string
      policyNotes?: string
    }
    result: { policyId: string }
  }
  delete_policy: {
    parameters: { policyId: string }
    result: { policyId: string }
  }
  delete_policies: {
    parameters: { policyIds: string[] }
    result: { policyIds: string[] }
  }
  /** Non-root users (an app back end with an API key, say); `userTags` are user tag ids. */
  create_users: {
    parameters: { users: UserParams[] }
    result: { userIds: string[] }
  }
  delete_users: {
    parameters: { userIds: string[] }
    result: { userIds: string[] }
  }
  // ---- account management of the published clients ----
  /**
   * Links OIDC identities to a user: each `oidcToken` is verified (one account per identity per
   * parent organization); `oidcClaims` adds another audience of an identity the user has or links
   * in the same request.
   */
  create_oauth_providers: {
    parameters: {
      userId: string
      oauthProviders: {
        providerName: string
        oidcToken?: string
        oidcClaims?: { iss: string; sub: string; aud: string }
      }[]
    }
    result: { providerIds: string[] }
  }
  delete_oauth_providers: {
    parameters: { userId: string; providerIds: string[] }
    result: { providerIds: string[] }
  }
  /** A non-empty address needs a `verificationToken` proving it; `''` removes the address. */
  update_user_email: {
    parameters: { userId: string; userEmail: string; verificationToken?: string }
    result: { userId: string }
  }
  /** A non-empty number needs a `verificationToken` proving it; `''` removes the number. */
  update_user_phone_number: {
    parameters: { userId: string; userPhoneNumber: string; verificationToken?: string }
    result: { userId: string }
  }
  /**
   * Sets the organization's root users (users of the organization) and how many of them must
   * approve; a user left out keeps its credentials and acts where policies allow.
   */
  update_root_quorum: {
    parameters: { threshold: number; userIds: string[] }
    result: Record<string, never>
  }
  /** Deletes the sub-organization it is submitted in, with everything in it (root quorum only). */
  delete_sub_organization: {
    parameters: { deleteWithoutExport?: boolean }
    result: { subOrganizationUuid: string }
  }
  /** Standalone keys; `signWith` of the signing activities takes a private key id or address. */
  create_private_keys: {
    parameters: {
      privateKeys: {
        privateKeyName: string
        curve: Curve
        privateKeyTags: string[]
        addressFormats: AddressFormat[]
      }[]
    }
    result: {
      privateKeys: { privateKeyId: string; addresses: { format: AddressFormat; address: string }[] }[]
    }
  }
  export_private_key: {
    parameters: { privateKeyId: string; targetPublicKey: string }
    result: { privateKeyId: string; exportBundle: string }
  }
  init_import_private_key: {
    parameters: { userId: string }
    result: { importBundle: string }
  }
  /** `encryptedBundle` holds the 32-byte key (secp256k1 scalar or ed25519 seed). */
  import_private_key: {
    parameters: {
      userId: string
      privateKeyName: string
      encryptedBundle: string
      curve: Curve
      addressFormats: AddressFormat[]
    }
    result: { privateKeyId: string; addresses: { format: AddressFormat; address: string }[] }
  }
  // ---- wing: spending limits (issue 37) ----
  latchkey_create_spending_limit: {
    parameters: SpendingLimitParameters
    result: { spendingLimitId: string }
  }
  latchkey_update_spending_limit: {
    parameters: {
      spendingLimitId: string
      spendingLimitName?: string
      /** The new cap, a decimal string of the asset's smallest unit. */
      amount?: string
      /** Replaces the allow-list; `[]` removes it. */
      allowedDestinations?: string[]
    }
    result: { spendingLimitId: string }
  }
  latchkey_delete_spending_limit: {
    parameters: { spendingLimitId: string }
    result: { spendingLimitId: string }
  }
  create_session_profile: {
    parameters: SessionProfileParameters
    result: { sessionProfileId: string }
  }
  latchkey_update_session_profile: {
    parameters: { sessionProfileId: string } & Partial<SessionProfileParameters>
    result: { sessionProfileId: string }
  }
  latchkey_delete_session_profile: {
    parameters: { sessionProfileId: string }
    result: { sessionProfileId: string }
  }
  // ---- wing: MFA (issue 38) ----
  /** An MFA policy on a user: activities of theirs its condition matches wait for its steps. */
  create_mfa_policy: {
    parameters: import('./mfa.ts').CreateMfaPolicyParams
    result: { mfaPolicyId: string }
  }
  update_mfa_policy: {
    parameters: import('./mfa.ts').UpdateMfaPolicyParams
    result: { mfaPolicyId: string }
  }
  delete_mfa_policy: {
    parameters: { userId: string; mfaPolicyId: string }
    result: { mfaPolicyId: string }
  }
  /** Enrols a TOTP factor (unconfirmed): its secret and `otpauth://` URI, shown once. */
  latchkey_create_totp_factor: {
    parameters: { userId: string; factorName?: string }
    result: { factorId: string; secret: string; otpauthUri: string }
  }
  /** Confirms a TOTP factor with a first code. */
  latchkey_confirm_totp_factor: {
    parameters: { userId: string; factorId: string; code: string }
    result: { factorId: string }
  }
  latchkey_delete_totp_factor: {
    parameters: { userId: string; factorId: string }
    result: { factorId: string }
  }
  /** Ten single-use recovery codes, replacing any earlier ones; shown once. */
  latchkey_create_recovery_codes: {
    parameters: { userId: string }
    result: { recoveryCodes: string[] }
  }
  /**
   * Proves a TOTP step of an activity awaiting authenticators (by fingerprint) with a code, or a
   * recovery code; the response's `activity` is that activity.
   */
  latchkey_satisfy_mfa: {
    parameters: { fingerprint: string; totpCode?: string; recoveryCode?: string; contactCode?: string }
    result: Record<string, never>
  }
  /**
   * Sends a one-time code to the caller's verified e-mail or phone for an e-mail or SMS step of
   * their activity awaiting authenticators (by fingerprint); `latchkey_satisfy_mfa`'s
   * `contactCode` proves it. `sentTo` is the contact, masked.
   */
  latchkey_send_mfa_code: {
    parameters: {
      fingerprint: string
      type: 'AUTHENTICATION_TYPE_EMAIL_OTP' | 'AUTHENTICATION_TYPE_SMS_OTP'
    }
    result: { sentTo: string }
  }
  // ---- wing: webhooks (issue 39) ----
  create_webhook_endpoint: {
    parameters: { url: string; name: string; subscriptions?: WebhookSubscription[] }
    result: { endpointId: string; webhookEndpoint: WebhookEndpoint }
  }
  update_webhook_endpoint: {
    parameters: { endpointId: string; url?: string; name?: string; isActive?: boolean }
    result: { endpointId: string; webhookEndpoint: WebhookEndpoint }
  }
  delete_webhook_endpoint: {
    parameters: { endpointId: string }
    result: { endpointId: string }
  }
  /** Latchkey's own: sends an event to an endpoint again, under its id (a manual redelivery). */
  latchkey_redeliver_webhook_event: {
    parameters: { eventId: string; endpointId?: string }
    result: { eventId: string; endpointIds: string[] }
  }
  // ---- wing: import and pregeneration (issue 40) ----
  latchkey_init_user_import: {
    parameters: Record<string, never>
    result: { importBundle: string }
  }
  latchkey_import_user: {
    parameters: ImportUserParams
    result: ImportUserResult
  }
}

export type ActivityPath = keyof ActivityMap
export type ActivityParameters<P extends ActivityPath> = ActivityMap[P]['parameters']
export type ActivityResult<P extends ActivityPath> = ActivityMap[P]['result']

/** What a policy's `activity.resource` names: the kind of thing an activity acts on. */
export type PolicyResource =
  | 'ACTIVITY'
  | 'AUTH'
  | 'CREDENTIAL'
  | 'ORGANIZATION'
  | 'POLICY'
  | 'PRIVATE_KEY'
  | 'USER'
  | 'WALLET'

/** What a policy's `activity.action` names: what an activity does to its resource. */
export type PolicyAction =
  | 'APPROVE'
  | 'CREATE'
  | 'DELETE'
  | 'EXPORT'
  | 'IMPORT'
  | 'REJECT'
  | 'SEND'
  | 'SIGN'
  | 'UPDATE'

/** What the registry states about one activity; the wire keys are derived from it. */
export interface ActivityFacts {
  /**
   * The versions the service accepts for the activity, one type constant each: the kit sends the
   * first; the others (older versions it still takes, and the newer ones the published types name)
   * are accepted with their own parameter shape and answered under their own wire keys.
   */
  types: readonly [current: string, ...accepted: string[]]
  /**
   * The result key of an accepted type whose result is not named after it (a type whose result
   * shape stayed at an older version, or moved ahead of it: `INIT_OTP_V3` answers `initOtpResultV2`).
   */
  resultKeys?: { readonly [type: string]: string }
  /** `activity.resource` in policies. */
  resource: PolicyResource
  /** `activity.action` in policies. */
  action: PolicyAction
  /** The auth proxy's own user may submit it: sign-in and sign-up, nothing that touches funds. */
  proxyUser: boolean
  /**
   * It changes nothing, in the service or outside it: it only computes an answer from what is
   * stored (a signature, a read-only session).
   */
  readOnly: boolean
  /**
   * The result key carries the current type's version too (`…ResultV7`); most versioned
   * activities keep an unversioned result key.
   * @default false
   */
  versionedResult?: boolean
}

/** An activity's facts plus the names it has on the wire. */
export interface ActivityDefinition extends ActivityFacts {
  /** Type constant clients send and the activity carries: the first of `types`. */
  type: string
  /** Key of the intent inside `activity.intent`. */
  intentKey: string
  /** Key of the result inside `activity.result`. */
  resultKey: string
}

/** One definition per activity path; a path of `M` without its entry does not compile. */
export type ActivityRegistry<M = ActivityMap> = { readonly [P in keyof M]: ActivityDefinition }

const camel = (path: string) => path.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())

/**
 * The definitions of a table of facts: `type` is the current type constant, and the intent and
 * result keys are the camel-case path plus the current type's version suffix (`V7`), which the
 * result key carries only when `versionedResult` says so (or as `resultKeys` names it). Every
 * accepted type must name the path.
 */
export function activityDefinitions<M>(
  facts: { readonly [P in keyof M]: ActivityFacts },
): ActivityRegistry<M> {
  const definitions: Record<string, ActivityDefinition> = {}
  for (const [path, fact] of Object.entries(facts) as [string, ActivityFacts][]) {
    const type = fact.types[0]
    const base = `ACTIVITY_TYPE_${path.toUpperCase()}`
    if (type !== base && !type.startsWith(`${base}_V`))
      throw new Error(`the current type of ${path} must be ${base} or ${base}_V<n>, not ${type}`)
    for (const accepted of fact.types)
      if (accepted !== base && !new RegExp(`^${base}_V\\d+$`).test(accepted))
        throw new Error(`the accepted types of ${path} must be ${base} or ${base}_V<n>, not ${accepted}`)
    definitions[path] = { ...fact, type, ...wireKeysOf(path, fact, type) }
  }
  return definitions as ActivityRegistry<M>
}

/**
 * The intent and result keys an activity submitted as `type` carries: the version suffix is that
 * type's, so an activity submitted as an older accepted type answers under the keys its clients
 * read (`ethSendTransactionResult` for V1, `ethSendTransactionResultV2` for V2).
 */
export function wireKeysOf(
  path: string,
  facts: Pick<ActivityFacts, 'versionedResult' | 'resultKeys'>,
  type: string,
): { intentKey: string; resultKey: string } {
  const version = type.slice(`ACTIVITY_TYPE_${path.toUpperCase()}`.length + 1)
  return {
    intentKey: `${camel(path)}Intent${version}`,
    resultKey: facts.resultKeys?.[type] ?? `${camel(path)}Result${facts.versionedResult ? version : ''}`,
  }
}

/**
 * Every activity's facts, the one place they are kept: its type constants, its policy resource
 * and action, whether the auth proxy's user may submit it, whether it only reads.
 */
export const ACTIVITIES: ActivityRegistry = activityDefinitions<ActivityMap>({
  sign_raw_payloads: {
    types: ['ACTIVITY_TYPE_SIGN_RAW_PAYLOADS'],
    resource: 'WALLET',
    action: 'SIGN',
    proxyUser: false,
    readOnly: true,
  },
  sign_raw_payload: {
    types: ['ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2'],
    resource: 'WALLET',
    action: 'SIGN',
    proxyUser: false,
    readOnly: true,
  },
  sign_transaction: {
    types: ['ACTIVITY_TYPE_SIGN_TRANSACTION_V2'],
    resource: 'WALLET',
    action: 'SIGN',
    proxyUser: false,
    readOnly: true,
  },
  otp_login: {
    types: ['ACTIVITY_TYPE_OTP_LOGIN', 'ACTIVITY_TYPE_OTP_LOGIN_V2'],
    resource: 'AUTH',
    action: 'CREATE',
    proxyUser: true,
    readOnly: false,
  },
  update_user_tag: {
    types: ['ACTIVITY_TYPE_UPDATE_USER_TAG'],
    resource: 'USER',
    action: 'UPDATE',
    proxyUser: false,
    readOnly: false,
  },
  delete_wallets: {
    types: ['ACTIVITY_TYPE_DELETE_WALLETS'],
    resource: 'WALLET',
    action: 'DELETE',
    proxyUser: false,
    readOnly: false,
  },
  export_wallet_account: {
    types: ['ACTIVITY_TYPE_EXPORT_WALLET_ACCOUNT'],
    resource: 'WALLET',
    action: 'EXPORT',
    proxyUser: false,
    readOnly: false,
  },
  create_read_only_session: {
    types: ['ACTIVITY_TYPE_CREATE_READ_ONLY_SESSION'],
    resource: 'AUTH',
    action: 'CREATE',
    proxyUser: false,
    readOnly: true,
  },
  update_user_name: {
    types: ['ACTIVITY_TYPE_UPDATE_USER_NAME'],
    resource: 'USER',
    action: 'UPDATE',
    proxyUser: false,
    readOnly: false,
  },
  init_import_wallet: {
    types: ['ACTIVITY_TYPE_INIT_IMPORT_WALLET'],
    resource: 'WALLET',
    action: 'IMPORT',
    proxyUser: false,
    readOnly: false,
  },
  import_wallet: {
    types: ['ACTIVITY_TYPE_IMPORT_WALLET'],
    resource: 'WALLET',
    action: 'IMPORT',
    proxyUser: false,
    readOnly: false,
  },
  create_wallet: {
    types: ['ACTIVITY_TYPE_CREATE_WALLET'],
    resource: 'WALLET',
    action: 'CREATE',
    proxyUser: false,
    readOnly: false,
  },
  create_wallet_accounts: {
    types: ['ACTIVITY_TYPE_CREATE_WALLET_ACCOUNTS'],
    resource: 'WALLET',
    action: 'CREATE',
    proxyUser: false,
    readOnly: false,
  },
  create_sub_organization: {
    types: ['ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7', 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8'],
    versionedResult: true,
    resource: 'ORGANIZATION',
    action: 'CREATE',
    proxyUser: true,
    readOnly: false,
  },
  create_fiat_on_ramp_credential: {
    types: ['ACTIVITY_TYPE_CREATE_FIAT_ON_RAMP_CREDENTIAL'],
    resource: 'CREDENTIAL',
    action: 'CREATE',
    proxyUser: false,
    readOnly: false,
  },
  create_user_tag: {
    types: ['ACTIVITY_TYPE_CREATE_USER_TAG'],
    resource: 'USER',
    action: 'CREATE',
    proxyUser: false,
    readOnly: false,
  },
  eth_send_raw_transaction: {
    types: ['ACTIVITY_TYPE_ETH_SEND_RAW_TRANSACTION'],
    resource: 'WALLET',
    action: 'SEND',
    proxyUser: false,
    readOnly: false,
  },
  eth_send_transaction: {
    types: ['ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2', 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION'],
    versionedResult: true,
    resource: 'WALLET',
    action: 'SEND',
    proxyUser: false,
    readOnly: false,
  },
  sol_send_transaction: {
    types: ['ACTIVITY_TYPE_SOL_SEND_TRANSACTION_V2', 'ACTIVITY_TYPE_SOL_SEND_TRANSACTION'],
    versionedResult: true,
    resource: 'WALLET',
    action: 'SEND',
    proxyUser: false,
    readOnly: false,
  },
  init_otp: {
    types: ['ACTIVITY_TYPE_INIT_OTP', 'ACTIVITY_TYPE_INIT_OTP_V2', 'ACTIVITY_TYPE_INIT_OTP_V3'],
    resultKeys: { ACTIVITY_TYPE_INIT_OTP_V3: 'initOtpResultV2' },
    resource: 'AUTH',
    action: 'CREATE',
    proxyUser: true,
    readOnly: false,
  },
  verify_otp: {
    types: ['ACTIVITY_TYPE_VERIFY_OTP', 'ACTIVITY_TYPE_VERIFY_OTP_V2'],
    resource: 'AUTH',
    action: 'CREATE',
    proxyUser: true,
    readOnly: false,
  },
  oauth2_authenticate: {
    types: ['ACTIVITY_TYPE_OAUTH2_AUTHENTICATE'],
    resource: 'AUTH',
    action: 'CREATE',
    proxyUser: true,
    readOnly: false,
  },
  oauth_login: {
    types: ['ACTIVITY_TYPE_OAUTH_LOGIN'],
    resource: 'AUTH',
    action: 'CREATE',
    proxyUser: true,
    readOnly: false,
  },
  stamp_login: {
    types: ['ACTIVITY_TYPE_STAMP_LOGIN'],
    resource: 'AUTH',
    action: 'CREATE',
    proxyUser: false,
    readOnly: false,
  },
  export_wallet: {
    types: ['ACTIVITY_TYPE_EXPORT_WALLET'],
    resource: 'WALLET',
    action: 'EXPORT',
    proxyUser: false,
    readOnly: false,
  },
  create_api_keys: {
    types: ['ACTIVITY_TYPE_CREATE_API_KEYS', 'ACTIVITY_TYPE_CREATE_API_KEYS_V2'],
    resource: 'CREDENTIAL',
    action: 'CREATE',
    proxyUser: false,
    readOnly: false,
  },
  delete_api_keys: {
    types: ['ACTIVITY_TYPE_DELETE_API_KEYS'],
    resource: 'CREDENTIAL',
    action: 'DELETE',
    proxyUser: false,
    readOnly: false,
  },
  create_authenticators: {
    types: ['ACTIVITY_TYPE_CREATE_AUTHENTICATORS', 'ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2'],
    resource: 'CREDENTIAL',
    action: 'CREATE',
    proxyUser: false,
    readOnly: false,
  },
  delete_authenticators: {
    types: ['ACTIVITY_TYPE_DELETE_AUTHENTICATORS'],
    resource: 'CREDENTIAL',
    action: 'DELETE',
    proxyUser: false,
    readOnly: false,
  },
  approve_activity: {
    types: ['ACTIVITY_TYPE_APPROVE_ACTIVITY'],
    resource: 'ACTIVITY',
    action: 'APPROVE',
    proxyUser: false,
    readOnly: false,
  },
  reject_activity: {
    types: ['ACTIVITY_TYPE_REJECT_ACTIVITY'],
    resource: 'ACTIVITY',
    action: 'REJECT',
    proxyUser: false,
    readOnly: false,
  },
  create_policy: {
    types: ['ACTIVITY_TYPE_CREATE_POLICY_V3'],
    resource: 'POLICY',
    action: 'CREATE',
    proxyUser: false,
    readOnly: false,
  },
  create_policies: {
    types: ['ACTIVITY_TYPE_CREATE_POLICIES'],
    resource: 'POLICY',
    action: 'CREATE',
    proxyUser: false,
    readOnly: false,
  },
  update_policy: {
    types: ['ACTIVITY_TYPE_UPDATE_POLICY_V2'],
    versionedResult: true,
    resource: 'POLICY',
    action: 'UPDATE',
    proxyUser: false,
    readOnly: false,
  },
  delete_policy: {
    types: ['ACTIVITY_TYPE_DELETE_POLICY'],
    resource: 'POLICY',
    action: 'DELETE',
    proxyUser: false,
    readOnly: false,
  },
  delete_policies: {
    types: ['ACTIVITY_TYPE_DELETE_POLICIES'],
    resource: 'POLICY',
    action: 'DELETE',
    proxyUser: false,
    readOnly: false,
  },
  create_users: {
    types: ['ACTIVITY_TYPE_CREATE_USERS_V3', 'ACTIVITY_TYPE_CREATE_USERS_V4'],
    resource: 'USER',
    action: 'CREATE',
    proxyUser: false,
    readOnly: false,
  },
  delete_users: {
    types: ['ACTIVITY_TYPE_DELETE_USERS'],
    resource: 'USER',
    action: 'DELETE',
    proxyUser: false,
    readOnly: false,
  },
  create_oauth_providers: {
    types: ['ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS_V2'],
    versionedResult: true,
    resource: 'CREDENTIAL',
    action: 'CREATE',
    proxyUser: false,
    readOnly: false,
  },
  delete_oauth_providers: {
    types: ['ACTIVITY_TYPE_DELETE_OAUTH_PROVIDERS'],
    resource: 'CREDENTIAL',
    action: 'DELETE',
    proxyUser: false,
    readOnly: false,
  },
  update_user_email: {
    types: ['ACTIVITY_TYPE_UPDATE_USER_EMAIL'],
    resource: 'USER',
    action: 'UPDATE',
    proxyUser: false,
    readOnly: false,
  },
  update_user_phone_number: {
    types: ['ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER'],
    resource: 'USER',
    action: 'UPDATE',
    proxyUser: false,
    readOnly: false,
  },
  update_root_quorum: {
    types: ['ACTIVITY_TYPE_UPDATE_ROOT_QUORUM'],
    resource: 'ORGANIZATION',
    action: 'UPDATE',
    proxyUser: false,
    readOnly: false,
  },
  delete_sub_organization: {
    types: ['ACTIVITY_TYPE_DELETE_SUB_ORGANIZATION'],
    resource: 'ORGANIZATION',
    action: 'DELETE',
    proxyUser: false,
    readOnly: false,
  },
  create_private_keys: {
    types: ['ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2'],
    versionedResult: true,
    resource: 'PRIVATE_KEY',
    action: 'CREATE',
    proxyUser: false,
    readOnly: false,
  },
  export_private_key: {
    types: ['ACTIVITY_TYPE_EXPORT_PRIVATE_KEY'],
    resource: 'PRIVATE_KEY',
    action: 'EXPORT',
    proxyUser: false,
    readOnly: false,
  },
  init_import_private_key: {
    types: ['ACTIVITY_TYPE_INIT_IMPORT_PRIVATE_KEY'],
    resource: 'PRIVATE_KEY',
    action: 'IMPORT',
    proxyUser: false,
    readOnly: false,
  },
  import_private_key: {
    types: ['ACTIVITY_TYPE_IMPORT_PRIVATE_KEY'],
    resource: 'PRIVATE_KEY',
    action: 'IMPORT',
    proxyUser: false,
    readOnly: false,
  },
  // ---- wing: spending limits (issue 37) ----
  latchkey_create_spending_limit: {
    types: ['ACTIVITY_TYPE_LATCHKEY_CREATE_SPENDING_LIMIT'],
    resource: 'POLICY',
    action: 'CREATE',
    proxyUser: false,
    readOnly: false,
  },
  latchkey_update_spending_limit: {
    types: ['ACTIVITY_TYPE_LATCHKEY_UPDATE_SPENDING_LIMIT'],
    resource: 'POLICY',
    action: 'UPDATE',
    proxyUser: false,
    readOnly: false,
  },
  latchkey_delete_spending_limit: {
    types: ['ACTIVITY_TYPE_LATCHKEY_DELETE_SPENDING_LIMIT'],
    resource: 'POLICY',
    action: 'DELETE',
    proxyUser: false,
    readOnly: false,
  },
  create_session_profile: {
    types: ['ACTIVITY_TYPE_CREATE_SESSION_PROFILE'],
    resource: 'POLICY',
    action: 'CREATE',
    proxyUser: false,
    readOnly: false,
  },
  latchkey_update_session_profile: {
    types: ['ACTIVITY_TYPE_LATCHKEY_UPDATE_SESSION_PROFILE'],
    resource: 'POLICY',
    action: 'UPDATE',
    proxyUser: false,
    readOnly: false,
  },
  latchkey_delete_session_profile: {
    types: ['ACTIVITY_TYPE_LATCHKEY_DELETE_SESSION_PROFILE'],
    resource: 'POLICY',
    action: 'DELETE',
    proxyUser: false,
    readOnly: false,
  },
  // ---- wing: MFA (issue 38) ----
  create_mfa_policy: {
    types: ['ACTIVITY_TYPE_CREATE_MFA_POLICY'],
    resource: 'POLICY',
    action: 'CREATE',
    proxyUser: false,
    readOnly: false,
  },
  update_mfa_policy: {
    types: ['ACTIVITY_TYPE_UPDATE_MFA_POLICY'],
    resource: 'POLICY',
    action: 'UPDATE',
    proxyUser: false,
    readOnly: false,
  },
  delete_mfa_policy: {
    types: ['ACTIVITY_TYPE_DELETE_MFA_POLICY'],
    resource: 'POLICY',
    action: 'DELETE',
    proxyUser: false,
    readOnly: false,
  },
  latchkey_create_totp_factor: {
    types: ['ACTIVITY_TYPE_LATCHKEY_CREATE_TOTP_FACTOR'],
    resource: 'CREDENTIAL',
    action: 'CREATE',
    proxyUser: false,
    readOnly: false,
  },
  latchkey_confirm_totp_factor: {
    types: ['ACTIVITY_TYPE_LATCHKEY_CONFIRM_TOTP_FACTOR'],
    resource: 'CREDENTIAL',
    action: 'UPDATE',
    proxyUser: false,
    readOnly: false,
  },
  latchkey_delete_totp_factor: {
    types: ['ACTIVITY_TYPE_LATCHKEY_DELETE_TOTP_FACTOR'],
    resource: 'CREDENTIAL',
    action: 'DELETE',
    proxyUser: false,
    readOnly: false,
  },
  latchkey_create_recovery_codes: {
    types: ['ACTIVITY_TYPE_LATCHKEY_CREATE_RECOVERY_CODES'],
    resource: 'CREDENTIAL',
    action: 'CREATE',
    proxyUser: false,
    readOnly: false,
  },
  latchkey_satisfy_mfa: {
    types: ['ACTIVITY_TYPE_LATCHKEY_SATISFY_MFA'],
    resource: 'ACTIVITY',
    action: 'APPROVE',
    proxyUser: false,
    readOnly: false,
  },
  latchkey_send_mfa_code: {
    types: ['ACTIVITY_TYPE_LATCHKEY_SEND_MFA_CODE'],
    resource: 'ACTIVITY',
    action: 'APPROVE',
    proxyUser: false,
    readOnly: false,
  },
  // ---- wing: webhooks (issue 39) ----
  create_webhook_endpoint: {
    types: ['ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT'],
    resource: 'ORGANIZATION',
    action: 'CREATE',
    proxyUser: false,
    readOnly: false,
  },
  update_webhook_endpoint: {
    types: ['ACTIVITY_TYPE_UPDATE_WEBHOOK_ENDPOINT'],
    resource: 'ORGANIZATION',
    action: 'UPDATE',
    proxyUser: false,
    readOnly: false,
  },
  delete_webhook_endpoint: {
    types: ['ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT'],
    resource: 'ORGANIZATION',
    action: 'DELETE',
    proxyUser: false,
    readOnly: false,
  },
  latchkey_redeliver_webhook_event: {
    types: ['ACTIVITY_TYPE_LATCHKEY_REDELIVER_WEBHOOK_EVENT'],
    resource: 'ORGANIZATION',
    action: 'UPDATE',
    proxyUser: false,
    readOnly: false,
  },
  // ---- wing: import and pregeneration (issue 40) ----
  latchkey_init_user_import: {
    types: ['ACTIVITY_TYPE_LATCHKEY_INIT_USER_IMPORT'],
    resource: 'ORGANIZATION',
    action: 'IMPORT',
    proxyUser: false,
    readOnly: false,
  },
  latchkey_import_user: {
    types: ['ACTIVITY_TYPE_LATCHKEY_IMPORT_USER'],
    resource: 'ORGANIZATION',
    action: 'IMPORT',
    proxyUser: false,
    readOnly: false,
  },
})

export const ACTIVITY_PATHS = Object.keys(ACTIVITIES) as ActivityPath[]

/** Response body of every submit endpoint. */
export interface ActivityResponse<P extends ActivityPath = ActivityPath> {
  activity: Activity<Record<string, ActivityParameters<P>>, Record<string, ActivityResult<P>>>
}

/**
 * Reads `<name>Result` from an activity, tolerating the reference sample's extra
 * `activity.result.activity` nesting.
 */
export function activityResultOf<P extends ActivityPath>(
  path: P,
  activity: { result?: Record<string, unknown> },
): ActivityResult<P> | undefined {
  const key = ACTIVITIES[path].resultKey
  const result = activity.result ?? {}
  const direct = result[key]
  if (direct !== undefined) return direct as ActivityResult<P>
  const nested = (result.activity as { result?: Record<string, unknown> } | undefined)?.result?.[key]
  return nested as ActivityResult<P> | undefined
}
