import type { OAuthMethod, OtpType } from '@latchkey/protocol'
import { useMemo } from 'react'
import { WalletUnavailableError } from '../../core/errors.ts'
import {
  type Session,
  useAddPasskey,
  useDiscoverWallets,
  useOAuthSignIn,
  useOtpSignIn,
  usePasskeySignIn,
  usePasskeySignUp,
  useWalletKitConfig,
  useWalletSignIn,
} from '../../react/index.ts'
import type { DiscoveredWalletInfo } from './AuthFlowContext.ts'

type Signal = { signal: AbortSignal }
export type SignedIn = { session: Session; created: boolean }

/**
 * The public sign-in hooks, adapted to the flow's needs. Nothing here talks to the service on
 * its own: every request is one of the hooks' mutations, so `<AuthModal/>` and an app's own
 * headless UI run exactly the same code.
 */
export function useSignInActions({ discoverWallets }: { discoverWallets: boolean }) {
  // A disabled proxy or unknown configuration will not fix itself: retry only network failures.
  const config = useWalletKitConfig({
    query: {
      retry: (count, error) => count < 2 && (error.code === 'NETWORK_ERROR' || error.code === 'TIMEOUT'),
    },
  })
  const otp = useOtpSignIn()
  const oauth = useOAuthSignIn()
  const passkeySignIn = usePasskeySignIn()
  const passkeySignUp = usePasskeySignUp()
  const walletSignIn = useWalletSignIn()
  const addPasskey = useAddPasskey()
  // Wallet discovery (and its code) only loads once the wallet step is shown.
  const discovered = useDiscoverWallets({ query: { enabled: discoverWallets } })

  const wallets = useMemo<DiscoveredWalletInfo[]>(
    () => [
      ...(discovered.data?.ethereum ?? []).map((w) => ({
        id: `eip6963:${w.info.uuid}`,
        name: w.info.name,
        icon: w.info.icon,
      })),
      ...(discovered.data?.solana ?? []).map((w) => ({
        id: `solana:${w.info.name}`,
        name: w.info.name,
        icon: w.info.icon,
      })),
    ],
    [discovered.data],
  )

  return {
    config: {
      status: config.status,
      error: config.error,
      retry: () => void config.refetch(),
    },
    enabledMethods: config.data?.enabledProviders ?? [],
    /** Sent only by a development service, and kept only on its `baseUrl` origin: the code step links to it. */
    devOutboxUrl: config.data?.devOutboxUrl,
    /** The operator's CAPTCHA on sending codes, when enabled. */
    captcha: config.data?.captcha,
    /** The codes the service sends: how many characters, and whether letters are among them. */
    otp: {
      length: Number(config.data?.otpLength ?? 6) || 6,
      alphanumeric: config.data?.otpAlphanumeric === true,
    },
    passkeySupported: typeof window !== 'undefined' && typeof window.PublicKeyCredential === 'function',
    wallets,
    /** The code the OTP step verifies: the one `startOtp` sent last. */
    pendingOtp: otp.otp,
    startOtp: (p: { otpType: OtpType; contact: string; captchaToken?: string | undefined } & Signal) =>
      otp.sendCode.mutateAsync(p),
    completeOtp: (p: { otpCode: string } & Signal): Promise<SignedIn> => otp.verifyCode.mutateAsync(p),
    oauth: (p: { provider: OAuthMethod; onPopupBlocked: 'redirect' | 'error' } & Signal): Promise<SignedIn> =>
      oauth.mutateAsync(p),
    passkeySignIn: async (p: Signal): Promise<SignedIn> => ({
      ...(await passkeySignIn.mutateAsync(p)),
      created: false,
    }),
    passkeySignUp: async (
      p: Signal & { userName: string; authenticatorName?: string | undefined },
    ): Promise<SignedIn> => ({
      ...(await passkeySignUp.mutateAsync(p)),
      created: true,
    }),
    walletSignIn: (p: { walletId: string } & Signal): Promise<SignedIn> => {
      const ethereum = discovered.data?.ethereum.find((w) => `eip6963:${w.info.uuid}` === p.walletId)
      const solana = discovered.data?.solana.find((w) => `solana:${w.info.name}` === p.walletId)
      const wallet = ethereum
        ? ({ type: 'ethereum', provider: ethereum.provider } as const)
        : solana
          ? ({ type: 'solana', wallet: solana.wallet } as const)
          : undefined
      if (!wallet)
        return Promise.reject(
          new WalletUnavailableError('The chosen wallet is no longer announced by the browser'),
        )
      return walletSignIn.mutateAsync({ wallet, signal: p.signal })
    },
    addPasskey: async (_p: Signal) => {
      await addPasskey.mutateAsync()
    },
  }
}
