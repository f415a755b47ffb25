import {
  type GetSubOrganizationsParameters,
  type GetSubOrganizationsReturnType,
  getSubOrganizations,
} from '../actions/queries/getSubOrganizations.ts'
import type { Latchkey } from '../types.ts'
import { queryKeyOf, sessionScope } from './utils.ts'

export type GetSubOrganizationsQueryParameters = GetSubOrganizationsParameters

export const getSubOrganizationsQueryKey = (
  parameters: Omit<GetSubOrganizationsQueryParameters, 'organizationId' | 'sessionId'> & {
    sessionId: string | null
    organizationId?: string | null | undefined
  },
) => queryKeyOf('subOrganizations', parameters)
export type GetSubOrganizationsQueryKey = ReturnType<typeof getSubOrganizationsQueryKey>

/** Query options for `getSubOrganizations`; disabled until a session exists. */
export function getSubOrganizationsQueryOptions(
  client: Latchkey,
  parameters: GetSubOrganizationsQueryParameters = {},
) {
  const { scope, enabled } = sessionScope(client, parameters.sessionId)
  return {
    queryKey: getSubOrganizationsQueryKey({ ...scope, ...parameters, sessionId: scope.sessionId }),
    queryFn: ({ signal }: { signal?: AbortSignal }): Promise<GetSubOrganizationsReturnType> =>
      getSubOrganizations(client, { ...parameters, sessionId: scope.sessionId ?? undefined, signal }),
    enabled: enabled,
  }
}
