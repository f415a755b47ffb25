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
import type { ClientSignature } from './proxy.ts'
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

/** Parameters and results of every activity, keyed by its path under `/public/v1/submit/`. */
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
  otp_login: {
    parameters: {
      verificationToken: string
      publicKey: string
      expirationSeconds?: string
      invalidateExisting?: boolean
      /** The seed's hex signature over the token, or the published clients' object. */
      clientSignature?: string | ClientSignature
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
  // ---- extensions (design/protocol.md "Beyond the seed") ----
  init_otp: {
    parameters: {
      otpType: OtpType
      contact: string
      /** Code length, 6 to 9. @default 6 */
      otpLength?: number
      /** Lifetime of the code in seconds. @default 300 */
      expirationSeconds?: string
      emailCustomization?: { appName?: string; logoUrl?: string }
      smsCustomization?: { template?: string }
    }
    result: { otpId: string }
  }
  verify_otp: {
    parameters: { otpId: string; otpCode: string; publicKey?: string; expirationSeconds?: string }
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
    }
    result: { session: string }
  }
  stamp_login: {
    parameters: { publicKey: string; expirationSeconds?: string; invalidateExisting?: boolean }
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
  // ---- policies and users (issue 16) ----
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
  // ---- account management of the published clients (issue 14) ----
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
}

export type ActivityPath = keyof ActivityMap
export type ActivityParameters<P extends ActivityPath> = ActivityMap[P]['parameters']
export type ActivityResult<P extends ActivityPath> = ActivityMap[P]['result']

export interface ActivityDefinition {
  /** Type constant carried in the request body and the activity. */
  type: string
  /** Key of the intent inside `activity.intent`. */
  intentKey: string
  /** Key of the result inside `activity.result`. */
  resultKey: string
}

const camel = (path: string) => path.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())
const define = (path: string, version = ''): ActivityDefinition => ({
  type: `ACTIVITY_TYPE_${path.toUpperCase()}${version ? `_${version}` : ''}`,
  intentKey: `${camel(path)}Intent${version}`,
  resultKey: `${camel(path)}Result${version}`,
})

/** Type constant, intent key and result key of every activity. */
export const ACTIVITIES: { readonly [P in ActivityPath]: ActivityDefinition } = {
  sign_raw_payloads: define('sign_raw_payloads'),
  // The reference service versions the type and intent of the singular one, not its result.
  sign_raw_payload: {
    type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
    intentKey: 'signRawPayloadIntentV2',
    resultKey: 'signRawPayloadResult',
  },
  // The reference service versions the type and intent, not the result.
  sign_transaction: {
    type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
    intentKey: 'signTransactionIntentV2',
    resultKey: 'signTransactionResult',
  },
  otp_login: define('otp_login'),
  update_user_tag: define('update_user_tag'),
  delete_wallets: define('delete_wallets'),
  export_wallet_account: define('export_wallet_account'),
  create_read_only_session: define('create_read_only_session'),
  update_user_name: define('update_user_name'),
  init_import_wallet: define('init_import_wallet'),
  import_wallet: define('import_wallet'),
  create_wallet: define('create_wallet'),
  create_wallet_accounts: define('create_wallet_accounts'),
  create_sub_organization: define('create_sub_organization', 'V7'),
  create_fiat_on_ramp_credential: define('create_fiat_on_ramp_credential'),
  create_user_tag: define('create_user_tag'),
  eth_send_raw_transaction: define('eth_send_raw_transaction'),
  init_otp: define('init_otp'),
  verify_otp: define('verify_otp'),
  oauth2_authenticate: define('oauth2_authenticate'),
  oauth_login: define('oauth_login'),
  stamp_login: define('stamp_login'),
  export_wallet: define('export_wallet'),
  create_api_keys: define('create_api_keys'),
  delete_api_keys: define('delete_api_keys'),
  create_authenticators: define('create_authenticators'),
  delete_authenticators: define('delete_authenticators'),
  approve_activity: define('approve_activity'),
  reject_activity: define('reject_activity'),
  // The reference service versions these types and intents, not their results.
  create_policy: {
    type: 'ACTIVITY_TYPE_CREATE_POLICY_V3',
    intentKey: 'createPolicyIntentV3',
    resultKey: 'createPolicyResult',
  },
  create_policies: define('create_policies'),
  update_policy: define('update_policy', 'V2'),
  delete_policy: define('delete_policy'),
  delete_policies: define('delete_policies'),
  create_users: {
    type: 'ACTIVITY_TYPE_CREATE_USERS_V3',
    intentKey: 'createUsersIntentV3',
    resultKey: 'createUsersResult',
  },
  delete_users: define('delete_users'),
  create_oauth_providers: define('create_oauth_providers', 'V2'),
  delete_oauth_providers: define('delete_oauth_providers'),
  update_user_email: define('update_user_email'),
  update_user_phone_number: define('update_user_phone_number'),
  delete_sub_organization: define('delete_sub_organization'),
  create_private_keys: define('create_private_keys', 'V2'),
  export_private_key: define('export_private_key'),
  init_import_private_key: define('init_import_private_key'),
  import_private_key: define('import_private_key'),
}

export const ACTIVITY_PATHS = Object.keys(ACTIVITIES) as ActivityPath[]

/** Request body of every submit endpoint. */
export interface ActivityRequest<P extends ActivityPath = ActivityPath> {
  type: string
  timestampMs: string
  organizationId: string
  parameters: ActivityParameters<P>
}

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
