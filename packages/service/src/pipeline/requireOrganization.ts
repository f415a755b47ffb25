import { ApiError } from '../kernel/base/errors.ts'
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
    throw new ApiError(
      'ORGANIZATION_NOT_FOUND',
      `organization ${organizationId.slice(0, 200)} not found`,
      field,
    )
  return organization
}
