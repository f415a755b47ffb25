import type { ProxyConfigRow } from '../kernel/store/model.ts'
import type { Reads } from '../kernel/store/Store.ts'

/**
 * The proxy configuration of an organization, or of its parent for a sub-organization: the sign-in
 * wing's settings, and the operator's ceiling on sessions (`sessionCeilingOf`).
 */
export async function proxyConfigFor(
  reads: Reads,
  organizationId: string,
): Promise<ProxyConfigRow | undefined> {
  const own = (await reads.findBy('proxyConfigs', 'organizationId', organizationId))[0]
  if (own) return own
  const parent = (await reads.get('organizations', organizationId))?.parentOrganizationId
  return parent ? (await reads.findBy('proxyConfigs', 'organizationId', parent))[0] : undefined
}
