// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest'
import { discoverEthereumWallets, discoverSolanaWallets } from './discoverWallets.ts'

describe('wallet discovery', () => {
  it('collects EIP-6963 announcements (one per uuid)', async () => {
    const provider = { request: async () => null }
    const info = { uuid: 'u-1', name: 'Test Wallet', icon: 'data:image/svg+xml,<svg/>', rdns: 'test.wallet' }
    const announce = () =>
      window.dispatchEvent(
        new CustomEvent('eip6963:announceProvider', { detail: Object.freeze({ info, provider }) }),
      )
    window.addEventListener('eip6963:requestProvider', announce)
    try {
      const wallets = await discoverEthereumWallets({ timeoutMs: 10 })
      expect(wallets).toEqual([{ type: 'ethereum', info, provider }])
    } finally {
      window.removeEventListener('eip6963:requestProvider', announce)
    }
  })

  it('finds Wallet Standard wallets that can sign Solana messages, registered before or on app-ready', () => {
    const signer = { name: 'Signer', icon: 'i', accounts: [], features: { 'solana:signMessage': {} } }
    const other = { name: 'Other', icon: 'i', accounts: [], features: { 'standard:connect': {} } }
    // A wallet that loaded first registers when the app announces itself.
    const onReady = (event: Event) => (event as CustomEvent).detail.register(signer)
    window.addEventListener('wallet-standard:app-ready', onReady)
    const onRequest = () =>
      window.dispatchEvent(
        new CustomEvent('wallet-standard:register-wallet', {
          detail: ({ register }: { register: (w: unknown) => void }) => register(other),
        }),
      )
    window.addEventListener('wallet-standard:app-ready', onRequest)
    try {
      expect(discoverSolanaWallets()).toEqual([
        { type: 'solana', info: { name: 'Signer', icon: 'i' }, wallet: signer },
      ])
    } finally {
      window.removeEventListener('wallet-standard:app-ready', onReady)
      window.removeEventListener('wallet-standard:app-ready', onRequest)
    }
  })
})
