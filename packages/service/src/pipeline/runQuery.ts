import { authenticate } from '../auth/authenticate.ts'
import { ApiError } from '../errors.ts'
import type { Runtime } from '../Runtime.ts'
import type { Registry } from '../registry.ts'
import { checkTimestamp } from './checkTimestamp.ts'
import { Reader } from './Reader.ts'
import { requestReads } from './requestReads.ts'
import { requireOrganization } from './requireOrganization.ts'

/**
 * `POST /public/v1/query/<path>` after the body was read: authenticate (stamp or read-only
 * session), check liveness when a `timestampMs` is present, then authorise: a caller reads its
 * own organization, and a parent organization's users read its sub-organizations.
 */
export async function runQuery(
  service: Runtime,
  registry: Registry,
  path: string,
  headers: Headers,
  bytes: Uint8Array,
  json: Record<string, unknown>,
): Promise<unknown> {
  const handler = registry.queries.get(path)
  if (!handler) throw new ApiError('ROUTE_NOT_FOUND', `no query at /public/v1/query/${path.slice(0, 80)}`)
  const target = typeof json.organizationId === 'string' ? json.organizationId : undefined
  const reads = await requestReads(service, registry, headers, target)
  const caller = await authenticate(service, headers, bytes, 'query', target, reads)
  const body = new Reader(json, '')
  if (body.has('timestampMs')) checkTimestamp(service, body)
  const organization = await requireOrganization(reads, body.string('organizationId', { max: 200 }))
  const allowed =
    caller.organizationId === organization.id ||
    (!caller.readOnly && caller.organizationId === organization.parentOrganizationId)
  if (!allowed)
    throw new ApiError(
      'PERMISSION_DENIED',
      `your credential belongs to organization ${caller.organizationId}, which cannot read ${organization.id}`,
      'organizationId',
    )
  for (const plugin of registry.plugins)
    await plugin.authorize?.({ kind: 'query', path, caller, organization, reads }, service)
  const request = handler.parse(body)
  return handler.run(
    { store: service.store, service, registry, now: service.now(), organization, caller },
    request,
  )
}
