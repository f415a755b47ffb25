// The connector's code, shared by `latchkey/wagmi` (index.ts, for wagmi) and `latchkey/wagmi/core`
// (core.ts, for @wagmi/core without React). Types only from @wagmi/core here: at run time this
// file imports neither package, so each entry resolves from what its app installed.
import type { CreateConnectorFn } from '@wagmi/core'
import { type Address, getAddress, SwitchChainError, UserRejectedRequestError } from 'viem'
import { logout } from '../core/actions/auth/logout.ts'
import type { Latchkey } from '../core/createLatchkey.ts'
import { isUsable } from '../core/session/sessionMachine.ts'
import { submit } from '../core/transport/activity.ts'
import { createLatchkeyEip1193Provider, type LatchkeyEip1193Provider } from '../viem/provider.ts'

import type { LatchkeyParameters, Properties } from './types.ts'

const hasUsableSession = (client: Latchkey) => {
  const { activeId, sessions } = client.store.getState()
  return isUsable(activeId ? sessions[activeId]?.status : undefined)
}

/** The conventional first Ethereum account (BIP-44 coin 60, account 0). */
const ETHEREUM_ACCOUNT = {
  curve: 'CURVE_SECP256K1',
  pathFormat: 'PATH_FORMAT_BIP32',
  path: "m/44'/60'/0'/0/0",
  addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
} as const

/**
 * The connector's function, for `createConnector` of wagmi (`latchkey/wagmi`) or of @wagmi/core
 * (`latchkey/wagmi/core`): the same code whichever package the app installed. The entry passes its
 * package's `ChainNotConfiguredError`, so `instanceof` works against the app's copy.
 */
export function latchkeyConnector(
  parameters: LatchkeyParameters,
  ChainNotConfiguredError: new () => Error,
): CreateConnectorFn<LatchkeyEip1193Provider, Properties> {
  const { client } = parameters

  return (config) => {
    // One provider per wagmi config, created on first use.
    let provider: LatchkeyEip1193Provider | undefined
    const rpcUrls = (): Record<number, string> => {
      const urls: Record<number, string> = {}
      for (const chain of config.chains) {
        const explicit = parameters.rpcUrls?.[chain.id]
        // wagmi's `http(url)` transport says its URL in `value.url`.
        const transport = config.transports?.[chain.id]?.({ chain, retryCount: 0 })
        const fromTransport = (transport?.value as { url?: unknown } | undefined)?.url
        const url = explicit ?? (typeof fromTransport === 'string' ? fromTransport : undefined)
        if (url) urls[chain.id] = url
      }
      return urls
    }
    const eip1193 = () => {
      provider ??= createLatchkeyEip1193Provider(client, {
        chains: config.chains,
        rpcUrls: rpcUrls(),
        signIn: parameters.signIn,
        sponsor: parameters.sponsor,
      })
      return provider
    }
    const accountsOf = (value: unknown) => (value as string[]).map((a) => getAddress(a))

    /** The session's accounts; with `createWallet`, a first wallet for a user who has none. */
    async function ensureAccounts(): Promise<readonly Address[]> {
      const accounts = accountsOf(await eip1193().request({ method: 'eth_accounts' }))
      const { createWallet: wallet } = parameters
      const sessionId = client.store.getState().activeId
      if (accounts.length > 0 || !wallet || !sessionId || !hasUsableSession(client)) return accounts
      // One creation per session even when several connectors follow this client (client.tasks is
      // the client's own registry of shared in-flight work); each re-reads before creating.
      const key = `latchkey/wagmi:createWallet:${sessionId}`
      let task = client.tasks.get(key)
      if (!task) {
        task = (async () => {
          if ((await eip1193().refreshAccounts()).length > 0) return
          // createWallet's `chains: ['ethereum']`, without its table of every chain's paths.
          await submit(client, 'create_wallet', {
            walletName: wallet.walletName,
            accounts: [ETHEREUM_ACCOUNT],
          })
        })().finally(() => client.tasks.delete(key))
        client.tasks.set(key, task)
      }
      await task
      // Announces the new account (accountsChanged), which connects wagmi when it is listening.
      return eip1193().refreshAccounts()
    }

    return {
      id: 'latchkey',
      name: 'Latchkey',
      type: 'latchkey' as const,
      client,

      async setup() {
        // Follow the provider from the start, connected or not: a sign-in anywhere connects wagmi.
        const provider = eip1193()
        provider.on('accountsChanged', this.onAccountsChanged.bind(this) as never)
        provider.on('chainChanged', this.onChainChanged.bind(this) as never)
        provider.on('disconnect', this.onDisconnect.bind(this) as never)
        provider.on('connect', this.onConnect.bind(this) as never)
      },

      async connect({ chainId, isReconnecting, withCapabilities } = {}) {
        await client.hydrate()
        let accounts = await ensureAccounts()
        if (accounts.length === 0 && !isReconnecting && !hasUsableSession(client)) {
          // eth_requestAccounts runs `signIn` (when given) and fails with 4001 without it.
          await eip1193()
            .request({ method: 'eth_requestAccounts' })
            .catch((error: Error) => {
              if (!hasUsableSession(client)) throw error
            })
          accounts = await ensureAccounts()
        }
        if (accounts.length === 0)
          throw new UserRejectedRequestError(
            new Error(
              hasUsableSession(client)
                ? 'The signed-in user has no Ethereum account'
                : 'Not signed in to Latchkey',
            ),
          )
        let currentChainId = await this.getChainId()
        if (chainId && chainId !== currentChainId)
          currentChainId = (await this.switchChain?.({ chainId }))?.id ?? currentChainId
        return {
          accounts: (withCapabilities
            ? accounts.map((address) => ({ address, capabilities: {} }))
            : accounts) as never,
          chainId: currentChainId,
        }
      },

      /** wagmi's `disconnect()` signs the session out: wagmi's state follows the kit's. */
      async disconnect() {
        if (hasUsableSession(client)) await logout(client)
      },

      async getAccounts() {
        return accountsOf(await eip1193().request({ method: 'eth_accounts' }))
      },

      async getChainId() {
        return Number(await eip1193().request({ method: 'eth_chainId' }))
      },

      async getProvider() {
        return eip1193()
      },

      async isAuthorized() {
        await client.hydrate()
        if (!hasUsableSession(client)) return false
        return (await this.getAccounts().catch(() => [])).length > 0
      },

      async switchChain({ chainId }) {
        const chain = config.chains.find((c) => c.id === chainId)
        if (!chain) throw new SwitchChainError(new ChainNotConfiguredError())
        await eip1193().request({
          method: 'wallet_switchEthereumChain',
          params: [{ chainId: `0x${chainId.toString(16)}` }],
        })
        return chain
      },

      onAccountsChanged(accounts) {
        if (accounts.length === 0) {
          this.onDisconnect()
          // Another session without an Ethereum account became active: give it its first wallet.
          if (hasUsableSession(client)) this.onConnect({ chainId: '' })
          return
        }
        const addresses = accounts.map((a) => getAddress(a))
        // Connected connectors have wagmi's `change` listener; disconnected ones only `connect`.
        if (config.emitter.listenerCount('change') === 0) {
          if (config.emitter.listenerCount('connect') === 0) return
          void this.getChainId().then((chainId) =>
            config.emitter.emit('connect', { accounts: addresses, chainId }),
          )
        } else config.emitter.emit('change', { accounts: addresses })
      },

      onChainChanged(chainId) {
        config.emitter.emit('change', { chainId: Number(chainId) })
      },

      /** A new session: give it a first wallet when asked to (the accounts follow by themselves). */
      onConnect() {
        if (parameters.createWallet)
          void ensureAccounts().catch((error: Error) => config.emitter.emit('error', { error }))
      },

      onDisconnect() {
        config.emitter.emit('disconnect')
      },
    }
  }
}
