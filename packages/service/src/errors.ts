import {
  ERROR_CODES,
  type ErrorBody,
  type ErrorCode,
  type GrpcCode,
  HTTP_STATUS_OF,
} from '@latchkey/protocol'

/**
 * The one error type the service throws on purpose. `onError` turns it into the wire body
 * `{ code, message, details: { errorCode, field } }` with the HTTP status of its gRPC code.
 */
export class ServiceError extends Error {
  override name = 'ServiceError'
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
    return HTTP_STATUS_OF[this.grpc]
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
