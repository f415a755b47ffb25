import type { ApiKeyCurve } from '../../../protocol/index.ts'
import type { Latchkey } from '../../createLatchkey.ts'
import { WalletUnavailableError } from '../../errors.ts'
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
import { submit } from '../../transport/activity.ts'
import { getAccount } from '../proxy/getAccount.ts'
import { proxySignup } from '../proxy/proxySignup.ts'
import { sessionLifetimeSeconds } from './loadWalletKitConfig.ts'
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
    const ensureAccount = async (publicKey: string) => {
      const { organizationId } = await getAccount(
        client,
        { filterType: 'PUBLIC_KEY', filterValue: publicKey },
        { signal },
      )
      if (organizationId) return
      await proxySignup(
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
    }
    const stamper: Stamper = {
      async stamp(body) {
        const stamp = await inner.stamp(body)
        await ensureAccount(inner.publicKey as string)
        return stamp
      },
    }
    const { result } = await submit(
      client,
      'stamp_login',
      { publicKey: key.publicKey, expirationSeconds: String(await sessionLifetimeSeconds(client)) },
      { organizationId: client.config.organizationId, stamper, signal },
    )
    return {
      session: addSessionFromJwt(client, { session: result.session, method: 'wallet', label: address }),
      created,
      address,
    }
  })
}
