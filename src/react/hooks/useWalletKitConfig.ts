import { type UseQueryResult, useQuery } from '@tanstack/react-query'
import type { GetWalletKitConfigReturnType } from '../../core/actions/proxy/getWalletKitConfig.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { getWalletKitConfigQueryOptions } from '../../core/query/getWalletKitConfig.ts'
import type { ClientParameter, QueryParameter } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'
import { useLatchkeyQueryClient } from './useLatchkeyQueryClient.ts'

export type UseWalletKitConfigParameters = ClientParameter & QueryParameter<GetWalletKitConfigReturnType>
export type UseWalletKitConfigReturnType = UseQueryResult<GetWalletKitConfigReturnType, LatchkeyError>

/** The enabled sign-in methods and session lifetime (`wallet_kit_config`); needs no session. */
export function useWalletKitConfig(
  parameters: UseWalletKitConfigParameters = {},
): UseWalletKitConfigReturnType {
  const client = useLatchkey(parameters)
  const queryClient = useLatchkeyQueryClient()
  return useQuery({ ...parameters.query, ...getWalletKitConfigQueryOptions(client) }, queryClient)
}
