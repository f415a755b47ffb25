import type { ErrorCode } from '../../protocol/index.ts'

/**
 * A refusal raised by the sign-in engines (OTP, OAuth, passkey). It carries the stable
 * `errorCode` of `src/protocol/errors.ts`; the service's error handler turns it into the
 * `{ code, message, details }` body with the matching HTTP status.
 */
export class AuthFlowError extends Error {
  override name = 'AuthFlowError'
  readonly errorCode: ErrorCode
  readonly details: { field?: string; [key: string]: unknown }

  constructor(
    errorCode: ErrorCode,
    message: string,
    details: { field?: string; [key: string]: unknown } = {},
  ) {
    super(message)
    this.errorCode = errorCode
    this.details = details
  }
}
