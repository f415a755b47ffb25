import { NotFoundError } from '../kernel/base/errors.ts'
import type { OrganizationRow } from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Store.ts'

/** The organization named by a request field, or a 404 naming that field. */
export async function requireOrganization(
  store: Reads,
  organizationId: string,
  field = 'organizationId',
): Promise<OrganizationRow> {
  const organization = await store.get('organizations', organizationId)
  if (!organization)
    throw new NotFoundError({
      code: 'ORGANIZATION_NOT_FOUND',
      field,
      message: `organization ${organizationId.slice(0, 200)} not found`,
    })
  return organization
}
