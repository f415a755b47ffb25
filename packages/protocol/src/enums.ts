/** Enumerations of the seed, plus the status values and the extensions this service adds. */

export const CURVES = ['CURVE_SECP256K1', 'CURVE_ED25519'] as const
export type Curve = (typeof CURVES)[number]

export const PATH_FORMATS = ['PATH_FORMAT_BIP32'] as const
export type PathFormat = (typeof PATH_FORMATS)[number]

export const API_KEY_CURVES = [
  'API_KEY_CURVE_P256',
  'API_KEY_CURVE_SECP256K1',
  'API_KEY_CURVE_ED25519',
] as const
export type ApiKeyCurve = (typeof API_KEY_CURVES)[number]

export const AUTHENTICATOR_TRANSPORTS = [
  'AUTHENTICATOR_TRANSPORT_BLE',
  'AUTHENTICATOR_TRANSPORT_INTERNAL',
  'AUTHENTICATOR_TRANSPORT_NFC',
  'AUTHENTICATOR_TRANSPORT_USB',
  'AUTHENTICATOR_TRANSPORT_HYBRID',
] as const
export type AuthenticatorTransport = (typeof AUTHENTICATOR_TRANSPORTS)[number]

export const PAYLOAD_ENCODINGS = [
  'PAYLOAD_ENCODING_HEXADECIMAL',
  'PAYLOAD_ENCODING_TEXT_UTF8',
  'PAYLOAD_ENCODING_EIP712',
  'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION',
] as const
export type PayloadEncoding = (typeof PAYLOAD_ENCODINGS)[number]

export const HASH_FUNCTIONS = [
  'HASH_FUNCTION_NO_OP',
  'HASH_FUNCTION_SHA256',
  'HASH_FUNCTION_KECCAK256',
  'HASH_FUNCTION_NOT_APPLICABLE',
] as const
export type HashFunction = (typeof HASH_FUNCTIONS)[number]

/** `sign_transaction`'s chain-agnostic transaction types. */
export const TRANSACTION_TYPES = ['TRANSACTION_TYPE_ETHEREUM', 'TRANSACTION_TYPE_SOLANA'] as const
export type TransactionType = (typeof TRANSACTION_TYPES)[number]

export const CREDENTIAL_TYPES = [
  'CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR',
  'CREDENTIAL_TYPE_API_KEY_P256',
  'CREDENTIAL_TYPE_RECOVER_USER_KEY_P256',
  'CREDENTIAL_TYPE_API_KEY_SECP256K1',
  'CREDENTIAL_TYPE_EMAIL_AUTH_KEY_P256',
  'CREDENTIAL_TYPE_API_KEY_ED25519',
  'CREDENTIAL_TYPE_OTP_AUTH_KEY_P256',
  'CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256',
  'CREDENTIAL_TYPE_OAUTH_KEY_P256',
  'CREDENTIAL_TYPE_LOGIN',
] as const
export type CredentialType = (typeof CREDENTIAL_TYPES)[number]

export const POLICY_OUTCOMES = [
  'OUTCOME_ALLOW',
  'OUTCOME_DENY_EXPLICIT',
  'OUTCOME_DENY_IMPLICIT',
  'OUTCOME_REQUIRES_CONSENSUS',
  'OUTCOME_REJECTED',
  'OUTCOME_ERROR',
] as const
export type PolicyOutcome = (typeof POLICY_OUTCOMES)[number]

const BITCOIN_NETS = ['MAINNET', 'TESTNET', 'SIGNET', 'REGTEST'] as const
const BITCOIN_KINDS = ['P2PKH', 'P2SH', 'P2WPKH', 'P2WSH', 'P2TR'] as const
export type BitcoinAddressFormat =
  `ADDRESS_FORMAT_BITCOIN_${(typeof BITCOIN_NETS)[number]}_${(typeof BITCOIN_KINDS)[number]}`
export const BITCOIN_ADDRESS_FORMATS = BITCOIN_NETS.flatMap((net) =>
  BITCOIN_KINDS.map((kind) => `ADDRESS_FORMAT_BITCOIN_${net}_${kind}` as BitcoinAddressFormat),
)

export const ADDRESS_FORMATS = [
  'ADDRESS_FORMAT_UNCOMPRESSED',
  'ADDRESS_FORMAT_COMPRESSED',
  'ADDRESS_FORMAT_ETHEREUM',
  'ADDRESS_FORMAT_SOLANA',
  'ADDRESS_FORMAT_COSMOS',
  'ADDRESS_FORMAT_TRON',
  'ADDRESS_FORMAT_SUI',
  'ADDRESS_FORMAT_APTOS',
  'ADDRESS_FORMAT_SEI',
  'ADDRESS_FORMAT_XLM',
  'ADDRESS_FORMAT_XRP',
  ...BITCOIN_ADDRESS_FORMATS,
  'ADDRESS_FORMAT_DOGE_MAINNET',
  'ADDRESS_FORMAT_DOGE_TESTNET',
  'ADDRESS_FORMAT_TON_V3R2',
  'ADDRESS_FORMAT_TON_V4R2',
  'ADDRESS_FORMAT_TON_V5R1',
  'ADDRESS_FORMAT_SPARK_MAINNET',
  'ADDRESS_FORMAT_SPARK_REGTEST',
] as const
export type AddressFormat = (typeof ADDRESS_FORMATS)[number]

export const ACTIVITY_STATUSES = [
  'ACTIVITY_STATUS_CREATED',
  'ACTIVITY_STATUS_PENDING',
  'ACTIVITY_STATUS_COMPLETED',
  'ACTIVITY_STATUS_FAILED',
  'ACTIVITY_STATUS_CONSENSUS_NEEDED',
  'ACTIVITY_STATUS_REJECTED',
  'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED',
] as const
export type ActivityStatus = (typeof ACTIVITY_STATUSES)[number]
export const TERMINAL_ACTIVITY_STATUSES: readonly ActivityStatus[] = [
  'ACTIVITY_STATUS_COMPLETED',
  'ACTIVITY_STATUS_FAILED',
  'ACTIVITY_STATUS_REJECTED',
]

export const OTP_TYPES = ['OTP_TYPE_EMAIL', 'OTP_TYPE_SMS'] as const
export type OtpType = (typeof OTP_TYPES)[number]

export const OAUTH2_PROVIDERS = [
  'OAUTH2_PROVIDER_GOOGLE',
  'OAUTH2_PROVIDER_APPLE',
  'OAUTH2_PROVIDER_FACEBOOK',
  'OAUTH2_PROVIDER_X',
  'OAUTH2_PROVIDER_DISCORD',
] as const
export type OAuth2Provider = (typeof OAUTH2_PROVIDERS)[number]

/** `enabledProviders` strings of `wallet_kit_config`. */
export const SIGN_IN_METHODS = [
  'email',
  'sms',
  'passkey',
  'wallet',
  'google',
  'apple',
  'facebook',
  'x',
  'discord',
] as const
export type SignInMethod = (typeof SIGN_IN_METHODS)[number]
export type OAuthMethod = Extract<SignInMethod, 'google' | 'apple' | 'facebook' | 'x' | 'discord'>
export const OAUTH_METHODS: readonly OAuthMethod[] = ['google', 'apple', 'facebook', 'x', 'discord']
export const oauthProviderOf = (method: OAuthMethod): OAuth2Provider =>
  `OAUTH2_PROVIDER_${method.toUpperCase()}` as OAuth2Provider

export const SUBORG_FILTER_TYPES = [
  'CREDENTIAL_ID',
  'NAME',
  'USERNAME',
  'EMAIL',
  'PHONE_NUMBER',
  'OIDC_TOKEN',
  'WALLET_ACCOUNT_ADDRESS',
  'PUBLIC_KEY',
] as const
export type SubOrgFilterType = (typeof SUBORG_FILTER_TYPES)[number]

/** Filters accepted by the proxy's `/v1/account`. */
export const ACCOUNT_FILTER_TYPES = [
  'EMAIL',
  'PHONE_NUMBER',
  'CREDENTIAL_ID',
  'OIDC_TOKEN',
  'PUBLIC_KEY',
] as const
export type AccountFilterType = (typeof ACCOUNT_FILTER_TYPES)[number]

export const SESSION_TYPES = ['SESSION_TYPE_READ_WRITE', 'SESSION_TYPE_READ_ONLY'] as const
export type SessionType = (typeof SESSION_TYPES)[number]

export const MNEMONIC_LENGTHS = [12, 15, 18, 21, 24] as const
export type MnemonicLength = (typeof MNEMONIC_LENGTHS)[number]

/**
 * Where a send stands (`get_send_transaction_status`'s `txStatus`). `PENDING`: signed and stored,
 * not yet accepted by a node; `BROADCASTED`: accepted, awaiting inclusion; `INCLUDED`: in a block
 * and succeeded; `FAILED`: reverted, rejected or expired; `CANCELLED`: given up before inclusion.
 * The published clients stop on `INCLUDED`/`COMPLETED` (success) and `FAILED`/`CANCELLED`.
 */
export const TX_STATUSES = ['PENDING', 'BROADCASTED', 'INCLUDED', 'FAILED', 'CANCELLED'] as const
export type TxStatus = (typeof TX_STATUSES)[number]
/** The statuses after which a send's status never changes. */
export const TX_STATUSES_FINAL: readonly TxStatus[] = ['INCLUDED', 'FAILED', 'CANCELLED']

/**
 * The Solana chain aliases `sol_send_transaction` takes (`caip2`), as the canonical CAIP-2 ids
 * (32-character genesis hash prefix) the service sends on and the policies judge.
 */
export const SOLANA_CAIP2_ALIASES: Readonly<Record<string, string>> = {
  'solana:mainnet': 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
  'solana:devnet': 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
}
