import type { UseQueryResult } from '@tanstack/react-query'
import type { GetApiKeysReturnType } from '../../core/actions/queries/getApiKeys.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { type GetApiKeysQueryParameters, getApiKeysQueryOptions } from '../../core/query/getApiKeys.ts'
import { type ClientParameter, type QueryParameter, useLatchkeyQuery } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseApiKeysParameters = GetApiKeysQueryParameters &
  ClientParameter &
  QueryParameter<GetApiKeysReturnType>
export type UseApiKeysReturnType = UseQueryResult<GetApiKeysReturnType, LatchkeyError>

/** API keys of a user (`get_api_keys`). */
export function useApiKeys(parameters: UseApiKeysParameters = {}): UseApiKeysReturnType {
  const { client: explicit, query, ...rest } = parameters
  const client = useLatchkey({ client: explicit })
  return useLatchkeyQuery(client, getApiKeysQueryOptions(client, rest), query, rest.sessionId)
}
