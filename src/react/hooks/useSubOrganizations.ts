import type { UseQueryResult } from '@tanstack/react-query'
import type { GetSubOrganizationsReturnType } from '../../core/actions/queries/getSubOrganizations.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import {
  type GetSubOrganizationsQueryParameters,
  getSubOrganizationsQueryOptions,
} from '../../core/query/getSubOrganizations.ts'
import { type ClientParameter, type QueryParameter, useLatchkeyQuery } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseSubOrganizationsParameters = GetSubOrganizationsQueryParameters &
  ClientParameter &
  QueryParameter<GetSubOrganizationsReturnType>
export type UseSubOrganizationsReturnType = UseQueryResult<GetSubOrganizationsReturnType, LatchkeyError>

/** Sub-organizations, filtered and paginated (`list_suborgs`). */
export function useSubOrganizations(
  parameters: UseSubOrganizationsParameters = {},
): UseSubOrganizationsReturnType {
  const { client: explicit, query, ...rest } = parameters
  const client = useLatchkey({ client: explicit })
  return useLatchkeyQuery(client, getSubOrganizationsQueryOptions(client, rest), query, rest.sessionId)
}
