import { ApiError } from '../errors.ts'
import type { Runtime } from '../Runtime.ts'
import type { Reader } from './Reader.ts'

/** Checks `timestampMs` against the clock (the request must be live). */
export function checkTimestamp(service: Runtime, body: Reader): void {
  const timestampMs = Number(body.uintString('timestampMs'))
  const skew = Math.abs(service.now() - timestampMs)
  if (skew > service.options.maxTimestampSkewMs)
    throw new ApiError(
      'TIMESTAMP_STALE',
      `timestampMs is ${Math.round(skew / 1000)} s away from the service clock (limit ${service.options.maxTimestampSkewMs / 1000} s)`,
      'timestampMs',
    )
}
