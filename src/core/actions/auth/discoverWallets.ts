import type { Eip1193Provider, SolanaWallet } from '../../stampers/walletStampers.ts'

/** EIP-6963 provider info. */
export interface Eip6963ProviderInfo {
  uuid: string
  name: string
  /** Data URI of the wallet's icon. */
  icon: string
  /** Reverse-DNS id, e.g. `io.metamask`. */
  rdns: string
}

export interface DiscoveredEthereumWallet {
  type: 'ethereum'
  info: Eip6963ProviderInfo
  provider: Eip1193Provider
}

export interface DiscoveredSolanaWallet {
  type: 'solana'
  info: { name: string; icon: string }
  wallet: SolanaWallet
}

/**
 * EIP-6963: asks injected Ethereum wallets to announce themselves and collects the answers
 * for `timeoutMs` (wallets answer synchronously in practice). Empty where there is no window.
 */
export function discoverEthereumWallets({
  timeoutMs = 150,
}: {
  timeoutMs?: number
} = {}): Promise<DiscoveredEthereumWallet[]> {
  if (typeof window === 'undefined') return Promise.resolve([])
  const found = new Map<string, DiscoveredEthereumWallet>()
  const onAnnounce = (event: Event) => {
    const detail = (event as CustomEvent<{ info: Eip6963ProviderInfo; provider: Eip1193Provider }>).detail
    if (detail?.info?.uuid && typeof detail.provider?.request === 'function')
      found.set(detail.info.uuid, { type: 'ethereum', info: detail.info, provider: detail.provider })
  }
  window.addEventListener('eip6963:announceProvider', onAnnounce)
  window.dispatchEvent(new Event('eip6963:requestProvider'))
  return new Promise((resolve) =>
    setTimeout(() => {
      window.removeEventListener('eip6963:announceProvider', onAnnounce)
      resolve([...found.values()])
    }, timeoutMs),
  )
}

/**
 * Wallet Standard discovery (the protocol of `@wallet-standard/app`'s `getWallets`, without the
 * dependency): wallets register through `wallet-standard:register-wallet` events and the
 * `wallet-standard:app-ready` event. Returns the wallets supporting Solana message signing.
 */
export function discoverSolanaWallets(): DiscoveredSolanaWallet[] {
  if (typeof window === 'undefined') return []
  const wallets = new Set<SolanaWallet>()
  type Register = (...registered: SolanaWallet[]) => () => void
  const api: { register: Register } = {
    register: (...registered) => {
      for (const wallet of registered) wallets.add(wallet)
      return () => {
        for (const wallet of registered) wallets.delete(wallet)
      }
    },
  }
  const onRegister = (event: Event) => {
    const callback = (event as CustomEvent<(api: { register: Register }) => void>).detail
    if (typeof callback === 'function') callback(api)
  }
  window.addEventListener('wallet-standard:register-wallet', onRegister)
  try {
    window.dispatchEvent(new CustomEvent('wallet-standard:app-ready', { detail: api }))
  } finally {
    window.removeEventListener('wallet-standard:register-wallet', onRegister)
  }
  return [...wallets]
    .filter((wallet) => 'solana:signMessage' in (wallet.features ?? {}))
    .map((wallet) => ({ type: 'solana', info: { name: wallet.name, icon: wallet.icon ?? '' }, wallet }))
}
