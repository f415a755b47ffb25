import { NotFoundError } from '../kernel/base/errors.ts'
import { Reader } from '../kernel/Reader.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { Caller, Registry } from '../kernel/registry.ts'
import type { OrganizationRow } from '../kernel/store/model.ts'
import type { Lookup, Reads } from '../kernel/store/Store.ts'
import { authenticate } from './authenticate.ts'
import type { RateLimitOptions } from './RateLimitOptions.ts'
import { rateLimit } from './rateLimit.ts'
import { requestReads } from './requestReads.ts'
import { requireOrganization } from './requireOrganization.ts'

/** A request to the activity API once its body was read. */
export interface PublicRequest {
  /** The activity's or query's path (`create_wallet`, `list_wallets`). */
  path: string
  headers: Headers
  /** The raw body, as stamped. */
  bytes: Uint8Array
  /** The body, parsed. */
  json: Record<string, unknown>
  /** The budgets of the API that took it (`activityApi`'s `rateLimits`), charged once admitted. @default none */
  rateLimits?: RateLimitOptions
}

/** What a request that was let in brings to its entry. */
export interface Admission<H> {
  handler: H
  caller: Caller
  /** The organization the request acts in. */
  organization: OrganizationRow
  /** The whole body, read field by field. */
  body: Reader
  /** The request's reads (`requestReads`). */
  reads: Reads
}

/** The parts of admission in which submitting an activity and running a query differ. */
export interface AdmissionRules<H> {
  kind: 'activity' | 'query'
  /** The handler of a path, if there is one (404 otherwise, before anything is read). */
  handlerOf(registry: Registry, path: string): H | undefined
  /** What the request will read in `organizationId` beyond its credential and organization, read with them. */
  lookupsOf?(request: {
    path: string
    handler: H
    organizationId: string
    json: Record<string, unknown>
  }): Lookup[]
  /** Checks the body's own fields once the caller is known: the type, liveness. */
  checkBody(runtime: Runtime, body: Reader, path: string): void
  /** The organization the request acts in, given the one its body names; refuses a caller who may not act there. */
  organizationOf(request: {
    path: string
    handler: H
    caller: Caller
    named: OrganizationRow
    reads: Reads
  }): Promise<OrganizationRow> | OrganizationRow
}

/**
 * Lets a request to the activity API in, the same way for both of its entries: find the path's
 * handler, read ahead what the request will read, authenticate the caller against the raw
 * bytes, check the body (`rules.checkBody`), find the organization it acts in and whether the
 * caller may act there (`rules.organizationOf`), then let every plugin's `authorize` refuse it.
 */
export async function admit<H>(
  runtime: Runtime,
  registry: Registry,
  rules: AdmissionRules<H>,
  { path, headers, bytes, json, rateLimits }: PublicRequest,
): Promise<Admission<H>> {
  const route = rules.kind === 'activity' ? 'submit' : 'query'
  const handler = rules.handlerOf(registry, path)
  if (!handler)
    throw new NotFoundError({
      code: 'ROUTE_NOT_FOUND',
      message: `no ${rules.kind} at /public/v1/${route}/${path.slice(0, 80)}`,
    })
  const organizationId = typeof json.organizationId === 'string' ? json.organizationId : undefined
  const reads = await requestReads(runtime, registry, {
    headers,
    organizationId,
    more: (id) => (rules.lookupsOf ? rules.lookupsOf({ path, handler, organizationId: id, json }) : []),
  })
  const caller = await runtime.timings.time('authenticate', () =>
    authenticate(runtime, { headers, bytes, route, organizationId, reads }),
  )
  const body = new Reader(json, '')
  rules.checkBody(runtime, body, path)
  const named = await requireOrganization(reads, body.string('organizationId', { max: 200 }))
  const organization = await rules.organizationOf({ path, handler, caller, named, reads })
  await rateLimit(runtime, registry, rateLimits, { kind: rules.kind, caller, organization, reads })
  for (const plugin of registry.plugins)
    await plugin.authorize?.({ kind: rules.kind, path, caller, organization, reads }, runtime)
  return { handler, caller, organization, body, reads }
}
