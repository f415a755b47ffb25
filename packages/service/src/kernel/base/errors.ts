import { ERROR_CODES, type ErrorBody, type ErrorCode, type GrpcCode, httpStatusOf } from '@latchkey/protocol'

/**
 * The service's errors, one root and classes grouped by domain (viem's `errors/` pattern):
 *
 * - `ServiceError`: the root of every error class of the service: startup, configuration, master
 *   key, CLI errors extend it directly and keep their own `name`.
 * - `ApiError` (beneath it): an error the service answers a request with on purpose. The pipeline's
 *   one error mapper (`pipeline/errorResponse.ts`) answers it as
 *   `{ code, message, details: { errorCode, field?, …extra } }` with the HTTP status of its code;
 *   anything else becomes a logged 500 `INTERNAL`.
 * - The domain classes beneath `ApiError`, each for a family of error codes and built from an
 *   options object: `FieldError`, `NotFoundError`, `AuthenticationError`, `CredentialError`,
 *   `PermissionError`, `ConflictError`, `NotConfiguredError`, `LimitError`, `UnavailableError`,
 *   `InternalError`. `new ApiError(code, message, field?, extra?)` stays for re-raising an error
 *   whose code is only known at run time (a stored failure, a relayed answer).
 *
 * A domain error says what went wrong either as a whole `message`, or as a `reason` about its
 * `field`: `{ field: 'parameters.calls', reason: 'must not be empty' }` answers the message
 * `parameters.calls must not be empty`. Each class refuses a code outside its family.
 */
export type ServiceErrorType = ServiceError & { name: 'ServiceError' }
export class ServiceError extends Error {
  override name = 'ServiceError'
}

export type ApiErrorType = ApiError & { name: 'ApiError' }
export class ApiError extends ServiceError {
  override name = 'ApiError'
  readonly errorCode: ErrorCode
  readonly field?: string
  readonly extra: Record<string, unknown>

  constructor(errorCode: ErrorCode, message: string, field?: string, extra: Record<string, unknown> = {}) {
    super(message)
    this.errorCode = errorCode
    if (field !== undefined) this.field = field
    this.extra = extra
  }

  get grpc(): GrpcCode {
    return ERROR_CODES[this.errorCode]
  }

  get status(): number {
    return httpStatusOf(this.errorCode, this.field)
  }

  toBody(): ErrorBody {
    return {
      code: this.grpc,
      message: this.message,
      details: {
        errorCode: this.errorCode,
        ...(this.field !== undefined ? { field: this.field } : {}),
        ...this.extra,
      },
    }
  }
}

/** What a domain error says: a whole `message`, or a `reason` about its `field` (`${field} ${reason}`). */
export type ErrorStatement =
  | { message: string; reason?: undefined }
  | { field: string; reason: string; message?: undefined }

/** The options of every domain error; `code` defaults to the family's usual code where it has one. */
export type DomainErrorParameters<code extends ErrorCode> = {
  code?: code
  /** The request field at fault, e.g. `parameters.users[0].userEmail`. */
  field?: string | undefined
  /** More `details` on the wire (e.g. `retryAfterSeconds`, which also sets `Retry-After`). */
  extra?: Record<string, unknown> | undefined
} & ErrorStatement

type CodeRequired<code extends ErrorCode> = DomainErrorParameters<code> & { code: code }

function messageOf(parameters: ErrorStatement): string {
  return parameters.reason !== undefined ? `${parameters.field} ${parameters.reason}` : parameters.message
}

/** A family of codes, and the code it answers when none is given (none: every caller names one). */
interface Family<code extends ErrorCode> {
  codes: readonly code[]
  usual?: code
}

/** The shared constructor of the domain classes: checks the code is of the family (for untyped callers). */
abstract class DomainError<code extends ErrorCode> extends ApiError {
  declare readonly errorCode: code

  constructor(family: Family<code>, parameters: DomainErrorParameters<code>) {
    const { codes } = family
    const code = parameters.code ?? family.usual
    if (code === undefined || !(codes as readonly ErrorCode[]).includes(code))
      throw new TypeError(`error code ${String(code)} is not one of ${codes.join(', ')}`)
    super(code, messageOf(parameters), parameters.field, parameters.extra)
  }
}

/** Bad request input: a field (or the body) that is missing, malformed, out of range or too large. */
export const FIELD_ERROR_CODES = [
  'FIELD_INVALID',
  'FIELD_REQUIRED',
  'ENUM_INVALID',
  'PAYLOAD_TOO_LARGE',
  'BODY_INVALID',
  'ACTIVITY_TYPE_MISMATCH',
  'QUORUM_INVALID',
  'CONTACT_INVALID',
  'BUNDLE_INVALID',
  'TRANSACTION_INVALID',
  'PROXY_CONFIG_MISSING',
] as const satisfies readonly ErrorCode[]
export type FieldErrorCode = (typeof FIELD_ERROR_CODES)[number]
export type FieldErrorParameters = DomainErrorParameters<FieldErrorCode>
export type FieldErrorType = FieldError & { name: 'FieldError' }
export class FieldError extends DomainError<FieldErrorCode> {
  override name = 'FieldError'
  constructor(parameters: FieldErrorParameters) {
    super({ codes: FIELD_ERROR_CODES, usual: 'FIELD_INVALID' }, parameters)
  }
}

/** Something the request names does not exist (or not where the caller may see it); a route no one serves. */
export const NOT_FOUND_ERROR_CODES = [
  'ROUTE_NOT_FOUND',
  'ORGANIZATION_NOT_FOUND',
  'USER_NOT_FOUND',
  'WALLET_NOT_FOUND',
  'WALLET_ACCOUNT_NOT_FOUND',
  'ACTIVITY_NOT_FOUND',
  'AUTHENTICATOR_NOT_FOUND',
  'API_KEY_NOT_FOUND',
  'USER_TAG_NOT_FOUND',
  'POLICY_NOT_FOUND',
  'SPENDING_LIMIT_NOT_FOUND',
  'SESSION_PROFILE_NOT_FOUND',
  'OAUTH_PROVIDER_NOT_FOUND',
  'ACCOUNT_NOT_FOUND',
  'SEND_TRANSACTION_NOT_FOUND',
  'PROXY_CONFIG_NOT_FOUND',
  'KEY_NOT_FOUND',
] as const satisfies readonly ErrorCode[]
export type NotFoundErrorCode = (typeof NOT_FOUND_ERROR_CODES)[number]
export type NotFoundErrorParameters = CodeRequired<NotFoundErrorCode>
export type NotFoundErrorType = NotFoundError & { name: 'NotFoundError' }
export class NotFoundError extends DomainError<NotFoundErrorCode> {
  override name = 'NotFoundError'
  constructor(parameters: NotFoundErrorParameters) {
    super({ codes: NOT_FOUND_ERROR_CODES }, parameters)
  }
}

/** The request's own credential does not hold: no stamp, a bad or stale stamp, an unknown or expired key, a bad session. */
export const AUTHENTICATION_ERROR_CODES = [
  'STAMP_MISSING',
  'STAMP_MALFORMED',
  'STAMP_INVALID',
  'TIMESTAMP_STALE',
  'PUBLIC_KEY_NOT_FOUND',
  'API_KEY_EXPIRED',
  'SESSION_INVALID',
  'SESSION_EXPIRED',
  'WEBAUTHN_INVALID',
] as const satisfies readonly ErrorCode[]
export type AuthenticationErrorCode = (typeof AUTHENTICATION_ERROR_CODES)[number]
export type AuthenticationErrorParameters = CodeRequired<AuthenticationErrorCode>
export type AuthenticationErrorType = AuthenticationError & { name: 'AuthenticationError' }
export class AuthenticationError extends DomainError<AuthenticationErrorCode> {
  override name = 'AuthenticationError'
  constructor(parameters: AuthenticationErrorParameters) {
    super({ codes: AUTHENTICATION_ERROR_CODES }, parameters)
  }
}

/** A proof offered to sign in or to vouch for something does not hold: OTP code, verification or OIDC token, client signature, passkey attestation. */
export const CREDENTIAL_ERROR_CODES = [
  'OTP_INVALID',
  'OTP_EXPIRED',
  'VERIFICATION_TOKEN_INVALID',
  'CLIENT_SIGNATURE_INVALID',
  'OAUTH_EXCHANGE_FAILED',
  'PKCE_INVALID',
  'OIDC_TOKEN_INVALID',
  'OIDC_TOKEN_REPLAYED',
  'NONCE_MISMATCH',
  'ATTESTATION_INVALID',
] as const satisfies readonly ErrorCode[]
export type CredentialErrorCode = (typeof CREDENTIAL_ERROR_CODES)[number]
export type CredentialErrorParameters = CodeRequired<CredentialErrorCode>
export type CredentialErrorType = CredentialError & { name: 'CredentialError' }
export class CredentialError extends DomainError<CredentialErrorCode> {
  override name = 'CredentialError'
  constructor(parameters: CredentialErrorParameters) {
    super({ codes: CREDENTIAL_ERROR_CODES }, parameters)
  }
}

/** The caller is known but may not do this: a policy, the organization tree, a read-only session, an origin or method refused. */
export const PERMISSION_ERROR_CODES = [
  'PERMISSION_DENIED',
  'READ_ONLY_SESSION',
  'ORIGIN_NOT_ALLOWED',
  'METHOD_DISABLED',
  'CLIENT_ADDRESS_UNKNOWN',
  'SPEND_UNDECODABLE',
  'SPEND_DESTINATION_NOT_ALLOWED',
  'SESSION_SCOPE_DENIED',
  'SPONSOR_TRANSACTION_REFUSED',
] as const satisfies readonly ErrorCode[]
export type PermissionErrorCode = (typeof PERMISSION_ERROR_CODES)[number]
export type PermissionErrorParameters = DomainErrorParameters<PermissionErrorCode>
export type PermissionErrorType = PermissionError & { name: 'PermissionError' }
export class PermissionError extends DomainError<PermissionErrorCode> {
  override name = 'PermissionError'
  constructor(parameters: PermissionErrorParameters) {
    super({ codes: PERMISSION_ERROR_CODES, usual: 'PERMISSION_DENIED' }, parameters)
  }
}

/** The request conflicts with the state of things: the record exists, the vote was cast, the wallet was never exported, the send would revert. */
export const CONFLICT_ERROR_CODES = [
  'ALREADY_EXISTS',
  'ALREADY_VOTED',
  'ACTIVITY_NOT_VOTABLE',
  'WALLET_NOT_EXPORTED',
  'TRANSACTION_REVERTED',
] as const satisfies readonly ErrorCode[]
export type ConflictErrorCode = (typeof CONFLICT_ERROR_CODES)[number]
export type ConflictErrorParameters = DomainErrorParameters<ConflictErrorCode>
export type ConflictErrorType = ConflictError & { name: 'ConflictError' }
export class ConflictError extends DomainError<ConflictErrorCode> {
  override name = 'ConflictError'
  constructor(parameters: ConflictErrorParameters) {
    super({ codes: CONFLICT_ERROR_CODES, usual: 'ALREADY_EXISTS' }, parameters)
  }
}

/** What the request needs is not set up on this service or organization: a node, a sponsor, the auth proxy. */
export const NOT_CONFIGURED_ERROR_CODES = [
  'RPC_NOT_CONFIGURED',
  'SPONSORSHIP_NOT_CONFIGURED',
  'PROXY_DISABLED',
] as const satisfies readonly ErrorCode[]
export type NotConfiguredErrorCode = (typeof NOT_CONFIGURED_ERROR_CODES)[number]
export type NotConfiguredErrorParameters = CodeRequired<NotConfiguredErrorCode>
export type NotConfiguredErrorType = NotConfiguredError & { name: 'NotConfiguredError' }
export class NotConfiguredError extends DomainError<NotConfiguredErrorCode> {
  override name = 'NotConfiguredError'
  constructor(parameters: NotConfiguredErrorParameters) {
    super({ codes: NOT_CONFIGURED_ERROR_CODES }, parameters)
  }
}

/**
 * A limit was reached: a request rate, OTP attempts or sends, a gas cap (say when to come back in
 * `extra.retryAfterSeconds`), or the most records of a kind an organization holds
 * (`RESOURCE_LIMIT_REACHED`, naming the cap in `extra.limit`: no use coming back until some go).
 */
export const LIMIT_ERROR_CODES = [
  'RATE_LIMITED',
  'OTP_RATE_LIMITED',
  'OTP_ATTEMPTS_EXCEEDED',
  'GAS_CAP_EXCEEDED',
  'SPENDING_LIMIT_EXCEEDED',
  'RESOURCE_LIMIT_REACHED',
] as const satisfies readonly ErrorCode[]
export type LimitErrorCode = (typeof LIMIT_ERROR_CODES)[number]
export type LimitErrorParameters = DomainErrorParameters<LimitErrorCode>
export type LimitErrorType = LimitError & { name: 'LimitError' }
export class LimitError extends DomainError<LimitErrorCode> {
  override name = 'LimitError'
  constructor(parameters: LimitErrorParameters) {
    super({ codes: LIMIT_ERROR_CODES, usual: 'RATE_LIMITED' }, parameters)
  }
}

/** Something the service depends on cannot serve now (a chain node, the database): nothing was done, try again. */
export const UNAVAILABLE_ERROR_CODES = [
  'STORAGE_UNAVAILABLE',
  'RPC_FAILED',
] as const satisfies readonly ErrorCode[]
export type UnavailableErrorCode = (typeof UNAVAILABLE_ERROR_CODES)[number]
export type UnavailableErrorParameters = CodeRequired<UnavailableErrorCode>
export type UnavailableErrorType = UnavailableError & { name: 'UnavailableError' }
export class UnavailableError extends DomainError<UnavailableErrorCode> {
  override name = 'UnavailableError'
  constructor(parameters: UnavailableErrorParameters) {
    super({ codes: UNAVAILABLE_ERROR_CODES }, parameters)
  }
}

/** The service itself failed; the message says no more than the client may know. */
export const INTERNAL_ERROR_CODES = ['INTERNAL'] as const satisfies readonly ErrorCode[]
export type InternalErrorCode = (typeof INTERNAL_ERROR_CODES)[number]
export type InternalErrorParameters = DomainErrorParameters<InternalErrorCode>
export type InternalErrorType = InternalError & { name: 'InternalError' }
export class InternalError extends DomainError<InternalErrorCode> {
  override name = 'InternalError'
  constructor(parameters: InternalErrorParameters) {
    super({ codes: INTERNAL_ERROR_CODES, usual: 'INTERNAL' }, parameters)
  }
}
