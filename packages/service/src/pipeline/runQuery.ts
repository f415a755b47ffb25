import { PermissionError } from '../kernel/base/errors.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { QueryHandler, Registry } from '../kernel/registry.ts'
import { type AdmissionRules, admit, type PublicRequest } from './admit.ts'
import { checkTimestamp } from './checkTimestamp.ts'

/**
 * How a query is let in: its liveness is checked when a `timestampMs` is present (a read-only
 * session sends none), and a caller reads its own organization, a parent organization's users
 * (not read-only sessions) its sub-organizations.
 */
const queryRules: AdmissionRules<QueryHandler> = {
  kind: 'query',
  handlerOf: (registry, path) => registry.queries.get(path),
  checkBody(runtime, body) {
    if (body.has('timestampMs')) checkTimestamp(runtime, body)
  },
  organizationOf({ caller, named: organization }) {
    const allowed =
      caller.organizationId === organization.id ||
      (!caller.readOnly && caller.organizationId === organization.parentOrganizationId)
    if (!allowed)
      throw new PermissionError({
        field: 'organizationId',
        message: `your credential belongs to organization ${caller.organizationId}, which cannot read ${organization.id}`,
      })
    return organization
  },
}

/**
 * `POST /public/v1/query/<path>` after the body was read: admit it (stamp or read-only session),
 * then parse the body and run the query on committed state.
 */
export async function runQuery(
  runtime: Runtime,
  registry: Registry,
  request: PublicRequest,
): Promise<unknown> {
  const { handler, caller, organization, body } = await admit(runtime, registry, queryRules, request)
  const parameters = handler.parse(body)
  return handler.run(
    { store: runtime.store, runtime, registry, now: runtime.now(), organization, caller },
    parameters,
  )
}
