import { ERROR_CODES, type ErrorBody, type ErrorCode, type GrpcCode, httpStatusOf } from '@latchkey/protocol'

/**
 * The root of every error the service raises on purpose. The pipeline's one error mapper
 * (`pipeline/errorResponse.ts`) answers it as `{ code, message, details: { errorCode, field } }`
 * with the HTTP status of its code; anything else becomes a logged 500 `INTERNAL`.
 */
export class ApiError extends Error {
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
