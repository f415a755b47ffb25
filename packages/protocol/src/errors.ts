/** gRPC-style status numbers carried in `{ code }` of every error body. */
export const GRPC = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const
export type GrpcCode = (typeof GRPC)[keyof typeof GRPC]

/** HTTP status for each gRPC code. */
export const HTTP_STATUS_OF: Record<GrpcCode, number> = {
  0: 200,
  1: 499,
  2: 500,
  3: 400,
  4: 504,
  5: 404,
  6: 409,
  7: 403,
  8: 429,
  9: 412,
  10: 409,
  12: 501,
  13: 500,
  14: 503,
  16: 401,
}

/**
 * Stable machine-readable error codes, shared by the service (`details.errorCode`) and the
 * client (`LatchkeyError.code`). Never rename one: apps match on them.
 */
export const ERROR_CODES = {
  // request shape
  BODY_INVALID: GRPC.INVALID_ARGUMENT,
  FIELD_REQUIRED: GRPC.INVALID_ARGUMENT,
  FIELD_INVALID: GRPC.INVALID_ARGUMENT,
  ENUM_INVALID: GRPC.INVALID_ARGUMENT,
  PAYLOAD_TOO_LARGE: GRPC.INVALID_ARGUMENT,
  ACTIVITY_TYPE_MISMATCH: GRPC.INVALID_ARGUMENT,
  ROUTE_NOT_FOUND: GRPC.NOT_FOUND,
  // authentication
  STAMP_MISSING: GRPC.UNAUTHENTICATED,
  STAMP_MALFORMED: GRPC.UNAUTHENTICATED,
  STAMP_INVALID: GRPC.UNAUTHENTICATED,
  TIMESTAMP_STALE: GRPC.UNAUTHENTICATED,
  PUBLIC_KEY_NOT_FOUND: GRPC.UNAUTHENTICATED,
  API_KEY_EXPIRED: GRPC.UNAUTHENTICATED,
  SESSION_INVALID: GRPC.UNAUTHENTICATED,
  SESSION_EXPIRED: GRPC.UNAUTHENTICATED,
  WEBAUTHN_INVALID: GRPC.UNAUTHENTICATED,
  // authorisation
  PERMISSION_DENIED: GRPC.PERMISSION_DENIED,
  READ_ONLY_SESSION: GRPC.PERMISSION_DENIED,
  // resources
  ORGANIZATION_NOT_FOUND: GRPC.NOT_FOUND,
  USER_NOT_FOUND: GRPC.NOT_FOUND,
  WALLET_NOT_FOUND: GRPC.NOT_FOUND,
  WALLET_ACCOUNT_NOT_FOUND: GRPC.NOT_FOUND,
  ACTIVITY_NOT_FOUND: GRPC.NOT_FOUND,
  AUTHENTICATOR_NOT_FOUND: GRPC.NOT_FOUND,
  API_KEY_NOT_FOUND: GRPC.NOT_FOUND,
  USER_TAG_NOT_FOUND: GRPC.NOT_FOUND,
  POLICY_NOT_FOUND: GRPC.NOT_FOUND,
  OAUTH_PROVIDER_NOT_FOUND: GRPC.NOT_FOUND,
  ACCOUNT_NOT_FOUND: GRPC.NOT_FOUND,
  ALREADY_EXISTS: GRPC.ALREADY_EXISTS,
  // state
  WALLET_NOT_EXPORTED: GRPC.FAILED_PRECONDITION,
  QUORUM_INVALID: GRPC.INVALID_ARGUMENT,
  ACTIVITY_NOT_VOTABLE: GRPC.FAILED_PRECONDITION,
  ALREADY_VOTED: GRPC.FAILED_PRECONDITION,
  RPC_NOT_CONFIGURED: GRPC.FAILED_PRECONDITION,
  RPC_FAILED: GRPC.UNAVAILABLE,
  TRANSACTION_INVALID: GRPC.INVALID_ARGUMENT,
  BUNDLE_INVALID: GRPC.INVALID_ARGUMENT,
  // an organization (or a user, a wallet) holds the most of a kind of record it may:
  // `details.limit` names the cap (`usersPerOrganization` …), `details.max` its value
  RESOURCE_LIMIT_REACHED: GRPC.FAILED_PRECONDITION,
  // sending
  GAS_CAP_EXCEEDED: GRPC.RESOURCE_EXHAUSTED,
  // spending limits (issue 37): over a limit (`details`: the limit, used, remaining, when it frees),
  // a transaction or payload the service cannot read under a limit, a destination off its allow-list
  SPENDING_LIMIT_EXCEEDED: GRPC.RESOURCE_EXHAUSTED,
  SPEND_UNDECODABLE: GRPC.PERMISSION_DENIED,
  SPEND_DESTINATION_NOT_ALLOWED: GRPC.PERMISSION_DENIED,
  SPENDING_LIMIT_NOT_FOUND: GRPC.NOT_FOUND,
  // session profiles (issue 37): an activity outside the session's scope, a profile that is not there
  SESSION_SCOPE_DENIED: GRPC.PERMISSION_DENIED,
  SESSION_PROFILE_NOT_FOUND: GRPC.NOT_FOUND,
  // a sponsored send's simulation reverted: refused before signing, with `details.revertChain`
  TRANSACTION_REVERTED: GRPC.FAILED_PRECONDITION,
  SPONSORSHIP_NOT_CONFIGURED: GRPC.FAILED_PRECONDITION,
  SEND_TRANSACTION_NOT_FOUND: GRPC.NOT_FOUND,
  // `eth_send_raw_transaction` of a transaction a sponsor account of the service signed: only the
  // service's worker sends those
  SPONSOR_TRANSACTION_REFUSED: GRPC.PERMISSION_DENIED,
  // OTP
  OTP_INVALID: GRPC.INVALID_ARGUMENT,
  OTP_EXPIRED: GRPC.FAILED_PRECONDITION,
  OTP_ATTEMPTS_EXCEEDED: GRPC.RESOURCE_EXHAUSTED,
  OTP_RATE_LIMITED: GRPC.RESOURCE_EXHAUSTED,
  CONTACT_INVALID: GRPC.INVALID_ARGUMENT,
  VERIFICATION_TOKEN_INVALID: GRPC.UNAUTHENTICATED,
  CLIENT_SIGNATURE_INVALID: GRPC.UNAUTHENTICATED,
  // OAuth
  OAUTH_EXCHANGE_FAILED: GRPC.UNAUTHENTICATED,
  PKCE_INVALID: GRPC.INVALID_ARGUMENT,
  OIDC_TOKEN_INVALID: GRPC.UNAUTHENTICATED,
  OIDC_TOKEN_REPLAYED: GRPC.UNAUTHENTICATED,
  NONCE_MISMATCH: GRPC.UNAUTHENTICATED,
  // passkeys
  ATTESTATION_INVALID: GRPC.INVALID_ARGUMENT,
  // auth proxy
  PROXY_CONFIG_MISSING: GRPC.INVALID_ARGUMENT,
  PROXY_CONFIG_NOT_FOUND: GRPC.NOT_FOUND,
  PROXY_DISABLED: GRPC.FAILED_PRECONDITION,
  ORIGIN_NOT_ALLOWED: GRPC.PERMISSION_DENIED,
  METHOD_DISABLED: GRPC.PERMISSION_DENIED,
  // a network request whose client address the service could not read (its connection closed
  // before the request was taken): nothing is done for a client no address budget can be charged to
  CLIENT_ADDRESS_UNKNOWN: GRPC.PERMISSION_DENIED,
  // generic
  RATE_LIMITED: GRPC.RESOURCE_EXHAUSTED,
  INTERNAL: GRPC.INTERNAL,
  // the database cannot take the write (disk full, database down); nothing was acknowledged
  STORAGE_UNAVAILABLE: GRPC.UNAVAILABLE,
  // client-side only (never sent by the service)
  NETWORK_ERROR: GRPC.UNAVAILABLE,
  TIMEOUT: GRPC.DEADLINE_EXCEEDED,
  ABORTED: GRPC.CANCELLED,
  KEY_STORE_UNAVAILABLE: GRPC.FAILED_PRECONDITION,
  KEY_NOT_FOUND: GRPC.NOT_FOUND,
  BUNDLE_SIGNATURE_INVALID: GRPC.PERMISSION_DENIED,
  BUNDLE_MISMATCH: GRPC.PERMISSION_DENIED,
  CONSENSUS_NEEDED: GRPC.FAILED_PRECONDITION,
  // an activity waits for the user's second factor (an MFA policy matched it; issue 38)
  MFA_REQUIRED: GRPC.FAILED_PRECONDITION,
  ACTIVITY_FAILED: GRPC.ABORTED,
  ACTIVITY_REJECTED: GRPC.ABORTED,
  POLL_TIMEOUT: GRPC.DEADLINE_EXCEEDED,
  NOT_SIGNED_IN: GRPC.UNAUTHENTICATED,
  PROVIDER_MISSING: GRPC.FAILED_PRECONDITION,
  CONFIG_INVALID: GRPC.INVALID_ARGUMENT,
  POPUP_BLOCKED: GRPC.FAILED_PRECONDITION,
  OAUTH_STATE_MISMATCH: GRPC.PERMISSION_DENIED,
  USER_CANCELLED: GRPC.CANCELLED,
  WALLET_UNAVAILABLE: GRPC.FAILED_PRECONDITION,
  UNKNOWN: GRPC.UNKNOWN,
} as const satisfies Record<string, GrpcCode>

export type ErrorCode = keyof typeof ERROR_CODES

/**
 * The HTTP status the service answers an error with: its gRPC code's, except that a whole body
 * over the size limit is 413 (`PAYLOAD_TOO_LARGE` naming no field; one field too long stays 400).
 */
export const httpStatusOf = (errorCode: ErrorCode, field?: string): number =>
  errorCode === 'PAYLOAD_TOO_LARGE' && field === undefined ? 413 : HTTP_STATUS_OF[ERROR_CODES[errorCode]]

/** Body of every non-2xx response of the service (activity API and auth proxy). */
export interface ErrorBody {
  code: GrpcCode
  message: string
  details: { errorCode: ErrorCode; field?: string; [key: string]: unknown }
}

/** Messages the public service's clients match on for session-key failures. */
export const SESSION_KEY_MESSAGES = {
  notFound: 'could not find public key in organization or its parent organization',
  expired: 'expired api key publicKey',
} as const

export const isErrorBody = (value: unknown): value is ErrorBody =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as ErrorBody).code === 'number' &&
  typeof (value as ErrorBody).message === 'string'
