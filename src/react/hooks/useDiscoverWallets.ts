import { type UseQueryResult, useQuery } from '@tanstack/react-query'
import type {
  DiscoveredEthereumWallet,
  DiscoveredSolanaWallet,
} from '../../core/actions/auth/discoverWallets.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import type { QueryParameter } from './internal.ts'
import { useLatchkeyQueryClient } from './useLatchkeyQueryClient.ts'

export type DiscoveredWallets = { ethereum: DiscoveredEthereumWallet[]; solana: DiscoveredSolanaWallet[] }
export type UseDiscoverWalletsReturnType = UseQueryResult<DiscoveredWallets, LatchkeyError>

/** Browser wallets: EIP-6963 (Ethereum) and Wallet Standard (Solana); the code loads on first use. */
export function useDiscoverWallets(
  parameters: QueryParameter<DiscoveredWallets> = {},
): UseDiscoverWalletsReturnType {
  const queryClient = useLatchkeyQueryClient()
  return useQuery(
    {
      ...parameters.query,
      queryKey: ['latchkey', 'discoverWallets'],
      async queryFn() {
        const { discoverEthereumWallets, discoverSolanaWallets } = await import(
          '../../core/actions/auth/discoverWallets.ts'
        )
        return { ethereum: await discoverEthereumWallets(), solana: discoverSolanaWallets() }
      },
      staleTime: 30_000,
    },
    queryClient,
  )
}
