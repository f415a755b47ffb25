import type { Context } from 'hono'
import { HTTPException } from 'hono/http-exception'
import { ApiError, FieldError, InternalError, NotFoundError } from '../kernel/base/errors.ts'
import { reportUnexpected } from '../kernel/base/ServiceLogger.ts'
import { CryptoInputError } from '../kernel/crypto/errors.ts'
import { isDatabaseError, unavailable } from '../kernel/store/Store.ts'

/**
 * The one mapping from anything thrown to the error the service answers with. A crypto input
 * error names its field under `fieldPrefix` (an activity's `parameters`); an HTTP exception keeps
 * its 4xx meaning; anything else is a bug: logged, and answered as a bare 500 `INTERNAL`.
 */
export function toApiError(error: unknown, fieldPrefix = 'parameters'): ApiError {
  if (error instanceof CryptoInputError)
    return new FieldError({
      field: error.field ? `${fieldPrefix}.${error.field}` : undefined,
      message: error.message,
    })
  if (error instanceof ApiError) return error
  // A database error that escaped a transaction's retries: the request is refused, nothing was acknowledged.
  if (isDatabaseError(error)) return unavailable(error)
  if (error instanceof HTTPException && error.status === 413)
    return new FieldError({ code: 'PAYLOAD_TOO_LARGE', message: 'request body is too large' })
  if (error instanceof HTTPException && error.status < 500)
    return new FieldError({ code: 'BODY_INVALID', message: error.message || 'bad request' })
  // Through the service's logger (a JSON line in `log_format = "json"`), never a bare stack.
  reportUnexpected(error, 'request')
  return new InternalError({ message: 'internal error' })
}

/** `app.onError`: every route family answers errors through here. */
export function errorResponse(error: unknown, c: Context): Response {
  const apiError = toApiError(error)
  // A refusal that says when to come back says it in the header clients and proxies read too.
  const retryAfter = apiError.extra.retryAfterSeconds
  if (typeof retryAfter === 'number') c.header('Retry-After', String(retryAfter))
  return c.json(apiError.toBody(), apiError.status as 400)
}

/** `app.notFound`. */
export function notFoundResponse(c: Context): Response {
  return errorResponse(
    new NotFoundError({
      code: 'ROUTE_NOT_FOUND',
      message: `no route ${c.req.method} ${new URL(c.req.url).pathname.slice(0, 200)}`,
    }),
    c,
  )
}
