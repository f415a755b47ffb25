import type { UseQueryResult } from '@tanstack/react-query'
import type { GetUserTagsReturnType } from '../../core/actions/queries/getUserTags.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { type GetUserTagsQueryParameters, getUserTagsQueryOptions } from '../../core/query/getUserTags.ts'
import { type ClientParameter, type QueryParameter, useLatchkeyQuery } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseUserTagsParameters = GetUserTagsQueryParameters &
  ClientParameter &
  QueryParameter<GetUserTagsReturnType>
export type UseUserTagsReturnType = UseQueryResult<GetUserTagsReturnType, LatchkeyError>

/** User tags (`list_user_tags`). */
export function useUserTags(parameters: UseUserTagsParameters = {}): UseUserTagsReturnType {
  const { client: explicit, query, ...rest } = parameters
  const client = useLatchkey({ client: explicit })
  return useLatchkeyQuery(client, getUserTagsQueryOptions(client, rest), query, rest.sessionId)
}
