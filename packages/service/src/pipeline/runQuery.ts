import { authenticate } from '../auth/authenticate.ts'
import { ServiceError } from '../errors.ts'
import type { Runtime } from '../Runtime.ts'
import { Reader } from './Reader.ts'
import { checkTimestamp, parseBody } from './submitActivity.ts'

/**
 * The query pipeline: parse, authenticate (stamp or read-only session), check liveness when a
 * `timestampMs` is present, then authorise: a caller reads its own organization, and a parent
 * organization's users read its sub-organizations.
 */
export async function runQuery(
  service: Runtime,
  path: string,
  headers: Headers,
  bytes: Uint8Array,
): Promise<unknown> {
  const handler = service.queries.get(path)
  if (!handler) throw new ServiceError('ROUTE_NOT_FOUND', `no query at /public/v1/query/${path.slice(0, 80)}`)
  const json = parseBody(bytes)
  const target = typeof json.organizationId === 'string' ? json.organizationId : undefined
  const caller = await authenticate(service, headers, bytes, 'query', target)
  const body = new Reader(json, '')
  if (body.has('timestampMs')) checkTimestamp(service, body)
  const organizationId = body.string('organizationId', { max: 200 })
  const organization = service.store.get('organizations', organizationId)
  if (!organization)
    throw new ServiceError(
      'ORGANIZATION_NOT_FOUND',
      `organization ${organizationId} not found`,
      'organizationId',
    )
  const allowed =
    caller.organizationId === organization.id ||
    (!caller.readOnly && caller.organizationId === organization.parentOrganizationId)
  if (!allowed)
    throw new ServiceError(
      'PERMISSION_DENIED',
      `your credential belongs to organization ${caller.organizationId}, which cannot read ${organization.id}`,
      'organizationId',
    )
  for (const plugin of service.plugins)
    plugin.authorize?.({ kind: 'query', path, caller, organization }, service)
  const request = handler.parse(body)
  return handler.run({ store: service.store, service, now: service.now(), organization, caller }, request)
}
