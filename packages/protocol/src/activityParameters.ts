import { ACTIVITIES, type ActivityParameters, type ActivityPath, wireKeysOf } from './activities.ts'

/**
 * The top-level parameter names of an activity's published shapes (every member of a union: the
 * shapes of the versions the service accepts); none for an activity that takes no parameters.
 */
type NameOf<P extends ActivityPath> =
  ActivityParameters<P> extends infer T
    ? T extends unknown
      ? string extends keyof T
        ? never
        : keyof T & string
      : never
    : never

/**
 * The names of an activity whose versions have shapes the service tells apart by a field: it reads
 * `names` when `when` is given (`calls`), and the other shape's names otherwise.
 */
interface Alternative<N extends string> {
  readonly when: N
  readonly names: readonly N[]
}
type Entry<N extends string> = readonly N[] | readonly [Alternative<N>, readonly N[]]

type Listed<E> = E extends readonly [Alternative<infer A>, readonly (infer B)[]]
  ? A | B
  : E extends readonly (infer N)[]
    ? N
    : never
/** `path.name` of every published parameter the table does not list. */
type Unlisted<T> = {
  [P in ActivityPath]: P extends keyof T ? `${P}.${Exclude<NameOf<P>, Listed<T[P]>>}` : P
}[ActivityPath]

/**
 * The table as written, checked by the compiler both ways: it names only published parameters,
 * and an activity or parameter the protocol gains and the table lacks does not compile (the
 * argument then needs an `unlisted` property naming what is missing).
 */
const table = <const T extends { readonly [P in ActivityPath]: Entry<NameOf<P>> }>(
  entries: T & ([Unlisted<T>] extends [never] ? unknown : { unlisted: Unlisted<T> }),
): T => entries

/**
 * Every activity's parameter names as `@latchkey/protocol`'s activity types declare them, in their
 * order. The service stores `parameters` as submitted, names it does not know included: what an
 * approver is shown first is what the service reads for the activity, and nothing else.
 */
const PARAMETERS = /* @__PURE__ */ table({
  sign_raw_payloads: ['signWith', 'payloads', 'encoding', 'hashFunction'],
  sign_raw_payload: ['signWith', 'payload', 'encoding', 'hashFunction'],
  sign_transaction: ['signWith', 'type', 'unsignedTransaction'],
  otp_login: [
    'verificationToken',
    'publicKey',
    'expirationSeconds',
    'invalidateExisting',
    'clientSignature',
    'sessionProfileId',
  ],
  update_user_tag: ['userTagId', 'newUserTagName', 'addUserIds', 'removeUserIds'],
  delete_wallets: ['walletIds', 'deleteWithoutExport'],
  export_wallet_account: ['address', 'targetPublicKey'],
  create_read_only_session: [],
  update_user_name: ['userId', 'userName'],
  init_import_wallet: ['userId'],
  import_wallet: ['userId', 'walletName', 'encryptedBundle', 'accounts'],
  create_wallet: ['walletName', 'accounts', 'mnemonicLength'],
  create_wallet_accounts: ['walletId', 'accounts', 'persist'],
  create_sub_organization: [
    'subOrganizationName',
    'rootUsers',
    'rootQuorumThreshold',
    'wallet',
    'disableEmailRecovery',
    'disableEmailAuth',
    'disableSmsAuth',
    'disableOtpEmailAuth',
    'verificationToken',
    'clientSignature',
  ],
  create_fiat_on_ramp_credential: [
    'onrampProvider',
    'projectId',
    'publishableApiKey',
    'encryptedSecretApiKey',
    'encryptedPrivateApiKey',
    'sandboxMode',
  ],
  create_user_tag: ['userTagName', 'userIds'],
  eth_send_raw_transaction: ['signedTransaction', 'caip2'],
  // V2 sends `calls`; without them the service reads V1's one inline call (`to`, `value`, `data`).
  eth_send_transaction: [
    {
      when: 'calls',
      names: [
        'from',
        'caip2',
        'sponsor',
        'calls',
        'nonce',
        'gasLimit',
        'maxFeePerGas',
        'maxPriorityFeePerGas',
        'deadline',
        'gasStationNonce',
      ],
    },
    [
      'from',
      'caip2',
      'sponsor',
      'to',
      'value',
      'data',
      'nonce',
      'gasLimit',
      'maxFeePerGas',
      'maxPriorityFeePerGas',
      'deadline',
      'gasStationNonce',
    ],
  ],
  // V2 signs with `signWiths`; without them the service reads V1's one `signWith`.
  sol_send_transaction: [
    { when: 'signWiths', names: ['unsignedTransaction', 'signWiths', 'sponsor', 'caip2', 'recentBlockhash'] },
    ['unsignedTransaction', 'signWith', 'sponsor', 'caip2', 'recentBlockhash'],
  ],
  init_otp: [
    'otpType',
    'contact',
    'otpLength',
    'expirationSeconds',
    'appName',
    'emailCustomization',
    'smsCustomization',
    'captchaPass',
  ],
  verify_otp: ['otpId', 'otpCode', 'encryptedOtpBundle', 'publicKey', 'expirationSeconds'],
  oauth2_authenticate: ['provider', 'authCode', 'redirectUri', 'codeVerifier', 'nonce', 'clientId'],
  oauth_login: ['oidcToken', 'publicKey', 'expirationSeconds', 'invalidateExisting', 'sessionProfileId'],
  stamp_login: ['publicKey', 'expirationSeconds', 'invalidateExisting', 'sessionProfileId'],
  export_wallet: ['walletId', 'targetPublicKey'],
  create_api_keys: ['userId', 'apiKeys'],
  delete_api_keys: ['userId', 'apiKeyIds'],
  create_authenticators: ['userId', 'authenticators'],
  delete_authenticators: ['userId', 'authenticatorIds'],
  approve_activity: ['fingerprint'],
  reject_activity: ['fingerprint'],
  create_policy: ['policyName', 'effect', 'condition', 'consensus', 'notes'],
  create_policies: ['policies'],
  update_policy: [
    'policyId',
    'policyName',
    'policyEffect',
    'policyCondition',
    'policyConsensus',
    'policyNotes',
  ],
  delete_policy: ['policyId'],
  delete_policies: ['policyIds'],
  create_users: ['users'],
  delete_users: ['userIds'],
  create_oauth_providers: ['userId', 'oauthProviders'],
  delete_oauth_providers: ['userId', 'providerIds'],
  update_user_email: ['userId', 'userEmail', 'verificationToken'],
  update_user_phone_number: ['userId', 'userPhoneNumber', 'verificationToken'],
  update_root_quorum: ['threshold', 'userIds'],
  delete_sub_organization: ['deleteWithoutExport'],
  create_private_keys: ['privateKeys'],
  export_private_key: ['privateKeyId', 'targetPublicKey'],
  init_import_private_key: ['userId'],
  import_private_key: ['userId', 'privateKeyName', 'encryptedBundle', 'curve', 'addressFormats'],
  latchkey_create_spending_limit: [
    'spendingLimitName',
    'scope',
    'window',
    'asset',
    'amount',
    'allowedDestinations',
  ],
  latchkey_update_spending_limit: ['spendingLimitId', 'spendingLimitName', 'amount', 'allowedDestinations'],
  latchkey_delete_spending_limit: ['spendingLimitId'],
  create_session_profile: ['sessionProfileName', 'scope', 'expirationSeconds', 'notes'],
  latchkey_update_session_profile: [
    'sessionProfileId',
    'sessionProfileName',
    'scope',
    'expirationSeconds',
    'notes',
  ],
  latchkey_delete_session_profile: ['sessionProfileId'],
  create_mfa_policy: [
    'userId',
    'mfaPolicyName',
    'condition',
    'requiredAuthenticationMethods',
    'order',
    'notes',
  ],
  update_mfa_policy: [
    'userId',
    'mfaPolicyId',
    'mfaPolicyName',
    'condition',
    'requiredAuthenticationMethods',
    'order',
    'notes',
  ],
  delete_mfa_policy: ['userId', 'mfaPolicyId'],
  latchkey_create_totp_factor: ['userId', 'factorName'],
  latchkey_confirm_totp_factor: ['userId', 'factorId', 'code'],
  latchkey_delete_totp_factor: ['userId', 'factorId'],
  latchkey_create_recovery_codes: ['userId'],
  latchkey_satisfy_mfa: ['fingerprint', 'totpCode', 'recoveryCode', 'contactCode'],
  latchkey_send_mfa_code: ['fingerprint', 'type'],
  create_webhook_endpoint: ['url', 'name', 'subscriptions'],
  update_webhook_endpoint: ['endpointId', 'url', 'name', 'isActive'],
  delete_webhook_endpoint: ['endpointId'],
  latchkey_redeliver_webhook_event: ['eventId', 'endpointId'],
  latchkey_init_user_import: [],
  latchkey_import_user: [
    'externalId',
    'userName',
    'email',
    'phoneNumber',
    'oauthProviders',
    'passkeys',
    'wallets',
    'privateKeys',
    'addresses',
  ],
})

const isAlternative = (entry: Entry<string>): entry is readonly [Alternative<string>, readonly string[]] =>
  typeof entry[0] === 'object'

/** What the kit knows of an activity it read: its path, its parameters and their names. */
export interface KnownActivityParameters {
  path: ActivityPath
  /** The intent's parameters object (`activity.intent[<intentKey>]`), as stored. */
  parameters: Record<string, unknown>
  /** The names the service reads for this activity's type and shape, in the protocol's order. */
  names: readonly string[]
}

/**
 * The parameters of an activity (`type`, `intent` as the service answers them) and the names the
 * protocol gives them; `undefined` for a type the kit does not know (a newer service's), or an
 * intent without its type's parameters object.
 */
export function activityParameters(
  type: string,
  intent: Record<string, unknown>,
): KnownActivityParameters | undefined {
  const path = type
    .replace(/^ACTIVITY_TYPE_/, '')
    .replace(/_V\d+$/, '')
    .toLowerCase() as ActivityPath
  if (!Object.hasOwn(ACTIVITIES, path) || !ACTIVITIES[path].types.includes(type)) return undefined
  const parameters = intent[wireKeysOf(path, ACTIVITIES[path], type).intentKey]
  if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters)) return undefined
  const entry: Entry<string> = PARAMETERS[path]
  // The shape the service reads: a `null` is no value there (`Reader.has`), so `calls: null` is a
  // V1 send whose inline call is what runs, and what the approver must be shown.
  const names = isAlternative(entry)
    ? (parameters as Record<string, unknown>)[entry[0].when] != null
      ? entry[0].names
      : entry[1]
    : entry
  return { path, parameters: parameters as Record<string, unknown>, names }
}
