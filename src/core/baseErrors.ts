import { ERROR_CODES, type ErrorCode, type GrpcCode } from '@latchkey/protocol'

// The error root and the errors start-up code throws (creating the client and its key store):
// apart from the rest (errors.ts, which re-exports these), so a page that only starts the client
// does not bundle every error class. Import errors from errors.ts everywhere else.

export interface LatchkeyErrorOptions {
  /** Stable machine-readable code shared with the service. */
  code: ErrorCode
  /** HTTP status when the error came from a response. */
  status?: number
  details?: Record<string, unknown>
  cause?: unknown
}

/** Root of every error the client throws; `code` is stable and shared with the service. */
export class LatchkeyError extends Error {
  override name = 'LatchkeyError'
  readonly code: ErrorCode
  /** gRPC-style status number of `code`. */
  readonly grpcCode: GrpcCode
  readonly status: number | undefined
  readonly details: Record<string, unknown>
  /** The offending request field, when the service named one. */
  readonly field: string | undefined

  constructor(message: string, options: LatchkeyErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = options.code
    this.grpcCode = ERROR_CODES[options.code] ?? ERROR_CODES.UNKNOWN
    this.status = options.status
    this.details = options.details ?? {}
    this.field = typeof this.details.field === 'string' ? this.details.field : undefined
  }
}

/** IndexedDB (or WebCrypto's non-extractable keys) cannot hold the session keys here. */
export class KeyStoreUnavailableError extends LatchkeyError {
  override name = 'KeyStoreUnavailableError'
  constructor(reason: string, cause?: unknown) {
    super(
      `The key store is unavailable (${reason}). Use a browser with IndexedDB, or opt in to keyStore: 'memory'.`,
      { code: 'KEY_STORE_UNAVAILABLE', cause },
    )
  }
}

export class ConfigInvalidError extends LatchkeyError {
  override name = 'ConfigInvalidError'
  constructor(message: string, field?: string) {
    super(message, { code: 'CONFIG_INVALID', details: field ? { field } : {} })
  }
}
