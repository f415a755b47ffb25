import type { UseQueryResult } from '@tanstack/react-query'
import type { GetWhoamiReturnType } from '../../core/actions/queries/getWhoami.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { type GetWhoamiQueryParameters, getWhoamiQueryOptions } from '../../core/query/getWhoami.ts'
import { type ClientParameter, type QueryParameter, useLatchkeyQuery } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseWhoamiParameters = GetWhoamiQueryParameters &
  ClientParameter &
  QueryParameter<GetWhoamiReturnType>
export type UseWhoamiReturnType = UseQueryResult<GetWhoamiReturnType, LatchkeyError>

/** Who the session is (`whoami`): organization and user ids and names. */
export function useWhoami(parameters: UseWhoamiParameters = {}): UseWhoamiReturnType {
  const { client: explicit, query, ...rest } = parameters
  const client = useLatchkey({ client: explicit })
  return useLatchkeyQuery(client, getWhoamiQueryOptions(client, rest), query, rest.sessionId)
}
