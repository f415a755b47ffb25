import type { UseQueryResult } from '@tanstack/react-query'
import type { GetWalletsReturnType } from '../../core/actions/queries/getWallets.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { type GetWalletsQueryParameters, getWalletsQueryOptions } from '../../core/query/getWallets.ts'
import { type ClientParameter, type QueryParameter, useLatchkeyQuery } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseWalletsParameters = GetWalletsQueryParameters &
  ClientParameter &
  QueryParameter<GetWalletsReturnType>
export type UseWalletsReturnType = UseQueryResult<GetWalletsReturnType, LatchkeyError>

/** Wallets of the organization (`list_wallets`). */
export function useWallets(parameters: UseWalletsParameters = {}): UseWalletsReturnType {
  const { client: explicit, query, ...rest } = parameters
  const client = useLatchkey({ client: explicit })
  return useLatchkeyQuery(client, getWalletsQueryOptions(client, rest), query, rest.sessionId)
}
