import type { UseQueryResult } from '@tanstack/react-query'
import type { GetWalletReturnType } from '../../core/actions/queries/getWallet.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { type GetWalletQueryParameters, getWalletQueryOptions } from '../../core/query/getWallet.ts'
import { type ClientParameter, type QueryParameter, useLatchkeyQuery } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseWalletParameters = GetWalletQueryParameters &
  ClientParameter &
  QueryParameter<GetWalletReturnType>
export type UseWalletReturnType = UseQueryResult<GetWalletReturnType, LatchkeyError>

/** One wallet (`get_wallet`). */
export function useWallet(parameters: UseWalletParameters = {}): UseWalletReturnType {
  const { client: explicit, query, ...rest } = parameters
  const client = useLatchkey({ client: explicit })
  return useLatchkeyQuery(client, getWalletQueryOptions(client, rest), query, rest.sessionId)
}
