import type { UseQueryResult } from '@tanstack/react-query'
import type { GetActivityReturnType } from '../../core/actions/queries/getActivity.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { type GetActivityQueryParameters, getActivityQueryOptions } from '../../core/query/getActivity.ts'
import { type ClientParameter, type QueryParameter, useLatchkeyQuery } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseActivityParameters = GetActivityQueryParameters &
  ClientParameter &
  QueryParameter<GetActivityReturnType>
export type UseActivityReturnType = UseQueryResult<GetActivityReturnType, LatchkeyError>

/** One activity, e.g. one waiting for consensus (`get_activity`); set `query.refetchInterval` to watch it. */
export function useActivity(parameters: UseActivityParameters = {}): UseActivityReturnType {
  const { client: explicit, query, ...rest } = parameters
  const client = useLatchkey({ client: explicit })
  return useLatchkeyQuery(client, getActivityQueryOptions(client, rest), query, rest.sessionId)
}
