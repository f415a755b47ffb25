// An app that already uses react-query and wagmi (the common case Latchkey joins): one QueryClient
// shared by wagmi and the app's own query, an injected connector, the connection and a balance.
import { QueryClient, QueryClientProvider, useQuery } from '@tanstack/react-query'
import { createConfig, http, injected, useBalance, useConnect, useConnection, WagmiProvider } from 'wagmi'

export const queryClient = new QueryClient()
const chain = {
  id: 31337,
  name: 'Local',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: ['http://127.0.0.1:8545'] } },
}
const config = createConfig({ chains: [chain], connectors: [injected()], transports: { [chain.id]: http() } })

function Wallet() {
  const { address, status } = useConnection()
  const { connect, connectors } = useConnect()
  const balance = useBalance({ address })
  const price = useQuery({ queryKey: ['price'], queryFn: () => fetch('/price').then((r) => r.json()) })
  return (
    <div>
      <button type="button" onClick={() => connect({ connector: connectors[0] })}>
        {status} {address} {String(balance.data?.value ?? '')} {String(price.data ?? '')}
      </button>
    </div>
  )
}

export function App({ children }) {
  return (
    <WagmiProvider config={config}>
      <QueryClientProvider client={queryClient}>
        <Wallet />
        {children}
      </QueryClientProvider>
    </WagmiProvider>
  )
}
