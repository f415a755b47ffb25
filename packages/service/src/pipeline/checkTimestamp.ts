import { AuthenticationError } from '../kernel/base/errors.ts'
import type { Reader } from '../kernel/Reader.ts'
import type { Runtime } from '../kernel/Runtime.ts'

/** Checks `timestampMs` against the clock (the request must be live). */
export function checkTimestamp(runtime: Runtime, body: Reader): void {
  const timestampMs = Number(body.uintString('timestampMs'))
  const skew = Math.abs(runtime.now() - timestampMs)
  if (skew > runtime.options.maxTimestampSkewMs)
    throw new AuthenticationError({
      code: 'TIMESTAMP_STALE',
      field: 'timestampMs',
      reason: `is ${Math.round(skew / 1000)} s away from the service clock (limit ${runtime.options.maxTimestampSkewMs / 1000} s)`,
    })
}
