import type { OAuthMethod, SignInMethod } from '@latchkey/protocol'
import { createContext, useContext } from 'react'
import type { Ui } from '../ui/useUi.ts'
import type { AuthKey } from './authStrings.ts'

/** Where the sign-in flow is. */
export type AuthStep =
  | { name: 'methods'; channel: 'email' | 'sms' }
  | { name: 'otp'; channel: 'email' | 'sms'; contact: string }
  | { name: 'oauth'; method: OAuthMethod; status: 'waiting' | 'blocked' | 'redirecting' }
  | { name: 'passkey'; mode: 'sign-in' | 'sign-up' }
  | { name: 'wallet' }
  /** `via`: how the person signed in, so the offer says what a passkey saves them. */
  | { name: 'offer-passkey'; via: 'otp' | 'wallet' | OAuthMethod }
  | { name: 'success'; isNewUser: boolean }

/** The CAPTCHA widget's state in the flow (see `AuthFlow.captcha`). */
export interface AuthFlowCaptcha {
  provider: 'turnstile' | 'hcaptcha'
  siteKey: string
  /** The solved check's token, `null` until solved (and again after each send or expiry). */
  token: string | null
  setToken(token: string | null): void
}

/** An injected browser wallet found through EIP-6963. */
export interface DiscoveredWalletInfo {
  id: string
  name: string
  /** Data-URI icon announced by the wallet. */
  icon?: string | undefined
}

/**
 * The sign-in flow the steps render: state plus actions, each a call into a public sign-in hook
 * (`useOtpSignIn`, `useOAuthSignIn`, `usePasskeySignIn`, `usePasskeySignUp`, `useWalletSignIn`).
 */
export interface AuthFlow {
  ui: Ui<AuthKey>
  /** Id of the current step's title (the dialog is labelled by it). */
  titleId: string
  /** Sign-in methods to offer, in display order. */
  methods: SignInMethod[]
  config: { status: 'pending' | 'success' | 'error'; error: unknown; retry: () => void }
  /** The outbox of a development service (where its codes go); absent against a production service. */
  devOutboxUrl?: string | undefined
  /** The codes the service sends (`wallet_kit_config`'s `otpLength` and `otpAlphanumeric`). */
  otp?: { length: number; alphanumeric: boolean } | undefined
  step: AuthStep
  /** A request of the current step is running. */
  busy: boolean
  /** The last failure of the current step; cleared when the person acts again. */
  error: unknown
  clearError(): void
  /** One step back, or nothing on the first step. */
  back?: (() => void) | undefined
  /** Leave the flow (the modal closes; an inline form goes back to the first step). */
  cancel?: (() => void) | undefined
  setChannel(channel: 'email' | 'sms'): void
  /**
   * The CAPTCHA the proxy configuration enables (`wallet_kit_config`'s `captcha`), or `undefined`.
   * `startOtp` and `resendOtp` send the solved check's `token` and spend it (tokens are
   * single-use): `token` is `null` again and the widget asks for a new check.
   */
  captcha?: AuthFlowCaptcha | undefined
  startOtp(channel: 'email' | 'sms', contact: string): Promise<void>
  verifyOtp(code: string): Promise<void>
  /** Resolves `true` when a new code was sent. */
  resendOtp(): Promise<boolean>
  startOAuth(method: OAuthMethod, options?: { redirect?: boolean }): Promise<void>
  startPasskey(mode: 'sign-in' | 'sign-up'): Promise<void>
  /** Show the list of browser wallets. */
  openWallets(): void
  wallets: DiscoveredWalletInfo[]
  startWallet(walletId: string): Promise<void>
  pendingWalletId: string | null
  addPasskey(): Promise<void>
  /** Starts loading the later steps' code (called by the first screen). */
  prefetch?: (() => void) | undefined
  /** Close after success (or skip the passkey offer). */
  finish(): void
}

export const AuthFlowContext = createContext<AuthFlow | null>(null)

/** The flow of the enclosing `<AuthForm/>` or `<AuthModal/>`; steps cannot render without one. */
export function useAuthFlowContext(): AuthFlow {
  const flow = useContext(AuthFlowContext)
  if (!flow) throw new Error('AuthModal steps must be rendered inside <AuthForm> or <AuthModal>')
  return flow
}
