import type { Caller } from '../auth/Caller.ts'
import { ApiError } from '../errors.ts'
import type { Runtime } from '../Runtime.ts'
import type { Registry } from '../registry.ts'
import type { OrganizationRow } from '../store/model.ts'
import type { RateLimit, RateLimitName } from './RateLimitOptions.ts'
import { type Charge, databaseCounters, memoryCounters, type RateLimitCounters } from './rateLimitCounters.ts'

/** Each service's counters, made on first use (held per runtime so services in one process stay apart). */
const countersOf = new WeakMap<Runtime, RateLimitCounters>()

function counters(runtime: Runtime): RateLimitCounters {
  let found = countersOf.get(runtime)
  if (!found) {
    // A process that is its database's only writer sees every request, so memory is exact there;
    // several instances on one database share their buckets in it.
    found = runtime.store.backend.cachesReads ? memoryCounters() : databaseCounters(runtime.store)
    countersOf.set(runtime, found)
  }
  return found
}

const chargeOf = (key: string, limit: RateLimit): Charge => {
  const intervalMs = 1000 / limit.perSecond
  return { key, intervalMs, toleranceMs: (Math.max(limit.burst ?? limit.perSecond, 1) - 1) * intervalMs }
}

const describe = (name: RateLimitName, limit: RateLimit) =>
  `more than ${limit.perSecond} requests per second${
    (limit.burst ?? limit.perSecond) !== limit.perSecond ? ` (burst ${limit.burst})` : ''
  } ${name === 'perKey' ? 'from this credential' : 'in this organization'}`

/**
 * Charges an admitted request to its credential's and its organization's budgets (whichever are
 * configured) and refuses it with 429 `RATE_LIMITED` and `retryAfterSeconds` when one is spent. A
 * plugin's own service user (the auth proxy's, whose sign-in activities have their own limits) is
 * never refused; its calls still count.
 */
export async function rateLimit(
  runtime: Runtime,
  registry: Registry,
  request: { kind: 'activity' | 'query'; caller: Caller; organization: OrganizationRow },
): Promise<void> {
  const limits = runtime.options.rateLimits
  if (!limits?.perKey && !limits?.perOrganization) return
  const named: [RateLimitName, RateLimit, Charge][] = []
  if (limits.perKey)
    named.push(['perKey', limits.perKey, chargeOf(`key:${request.caller.credential.id}`, limits.perKey)])
  if (limits.perOrganization)
    named.push([
      'perOrganization',
      limits.perOrganization,
      chargeOf(`org:${request.organization.id}`, limits.perOrganization),
    ])
  const results = await counters(runtime).charge(
    named.map(([, , charge]) => charge),
    runtime.now(),
  )
  const refused = results.findIndex((result) => !result.allowed)
  if (refused === -1) return
  for (const plugin of registry.plugins) if (await plugin.ownsCaller?.(request.caller, runtime)) return
  const [name, limit] = named[refused]!
  const result = results[refused] as { retryAfterMs: number }
  runtime.emit('rate_limit.refused', { limit: name, kind: request.kind })
  throw new ApiError('RATE_LIMITED', describe(name, limit), undefined, {
    limit: name,
    perSecond: limit.perSecond,
    burst: limit.burst ?? limit.perSecond,
    retryAfterSeconds: Math.max(1, Math.ceil(result.retryAfterMs / 1000)),
  })
}
