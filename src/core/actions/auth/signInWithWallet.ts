import type { ApiKeyCurve } from '@latchkey/protocol'
import { WalletUnavailableError } from '../../errors.ts'
import { storageOf } from '../../session/persistence.ts'
import { addSessionFromJwt } from '../../session/sessions.ts'
import type { Session } from '../../session/types.ts'
import type { Stamper } from '../../stampers/types.ts'
import {
  type Eip1193Provider,
  ethereumWalletStamper,
  type SolanaWallet,
  solanaWalletStamper,
  type WalletStamper,
} from '../../stampers/walletStampers.ts'
import type { Latchkey } from '../../types.ts'
import { getAccount } from '../proxy/getAccount.ts'
import { proxySignup } from '../proxy/proxySignup.ts'
import { loginWithStamper } from './loginWithStamper.ts'

const WALLET_KEYS = 'latchkey.walletKeys'

/** Wallet address → public key, learnt from signatures (public information, nothing secret). */
function rememberedWalletKeys(client: Latchkey): Record<string, string> {
  try {
    return JSON.parse(storageOf(client.config)?.getItem(WALLET_KEYS) ?? '{}') as Record<string, string>
  } catch {
    return {}
  }
}

function rememberWalletKey(client: Latchkey, address: string, publicKey: string): void {
  try {
    const keys = { ...rememberedWalletKeys(client), [address.toLowerCase()]: publicKey }
    storageOf(client.config)?.setItem(WALLET_KEYS, JSON.stringify(keys))
  } catch {
    // Only an optimisation.
  }
}

import { withSessionKey } from './withSessionKey.ts'

export type ExternalWallet =
  | { type: 'ethereum'; provider: Eip1193Provider; address?: string | undefined }
  | { type: 'solana'; wallet: SolanaWallet; account?: SolanaWallet['accounts'][number] | undefined }

export type SignInWithWalletParameters = {
  wallet: ExternalWallet
  /** Name of the user created when there is no account yet. @default the wallet address */
  userName?: string | undefined
  signal?: AbortSignal | undefined
}
export type SignInWithWalletReturnType = { session: Session; created: boolean; address: string }

/**
 * External-wallet sign-in with ONE wallet prompt: the wallet stamps a `stamp_login` for a new
 * session key; while stamping we learn its public key, look the account up and, when there is
 * none, sign up with the wallet key as the user's API key before the stamped login is sent.
 */
export function signInWithWallet(
  client: Latchkey,
  parameters: SignInWithWalletParameters,
): Promise<SignInWithWalletReturnType> {
  const { signal } = parameters
  return withSessionKey(client, async (key) => {
    let inner: WalletStamper
    let address: string
    let curveType: ApiKeyCurve
    if (parameters.wallet.type === 'ethereum') {
      const { provider } = parameters.wallet
      address = parameters.wallet.address ?? ''
      if (!address) {
        const accounts = (await provider.request({ method: 'eth_requestAccounts' })) as string[]
        address = accounts?.[0] ?? ''
      }
      if (!address) throw new WalletUnavailableError('The wallet shared no account')
      inner = ethereumWalletStamper({ provider, address })
      curveType = 'API_KEY_CURVE_SECP256K1'
    } else {
      inner = solanaWalletStamper({ wallet: parameters.wallet.wallet, account: parameters.wallet.account })
      address = (parameters.wallet.account ?? parameters.wallet.wallet.accounts[0])?.address ?? ''
      curveType = 'API_KEY_CURVE_ED25519'
    }
    let created = false
    let organizationId: string | undefined
    const ensureAccount = async (publicKey: string) => {
      if (organizationId) return organizationId
      const found = await getAccount(client, { filterType: 'PUBLIC_KEY', filterValue: publicKey }, { signal })
      if (found.organizationId) {
        organizationId = found.organizationId
        return organizationId
      }
      const signup = await proxySignup(
        client,
        {
          userName: parameters.userName ?? address,
          apiKeys: [{ apiKeyName: `wallet ${address}`, publicKey, curveType }],
          authenticators: [],
          oauthProviders: [],
        },
        { signal },
      )
      created = true
      organizationId = signup.organizationId
      return organizationId
    }
    // Public keys of Ethereum wallets seen before (public data) spare a second prompt.
    const known = inner.publicKey ?? rememberedWalletKeys(client)[address.toLowerCase()]
    if (known) await ensureAccount(known)
    // Solana wallets share their public key up front: find (or create) the account before the
    // prompt and address the login to it. Ethereum keys are learnt from the signature.
    const stamper: Stamper = {
      async stamp(body) {
        const stamp = await inner.stamp(body)
        await ensureAccount(inner.publicKey as string)
        rememberWalletKey(client, address, inner.publicKey as string)
        return stamp
      },
    }
    const session = await loginWithStamper(client, {
      key,
      stamper,
      organizationId,
      signal,
      resolveOrganization: async () => organizationId,
    })
    return {
      session: addSessionFromJwt(client, { session, method: 'wallet', label: address }),
      created,
      address,
    }
  })
}
