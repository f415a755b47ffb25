import { type OAuthMethod, type OtpType, SIGN_IN_METHODS, type SignInMethod } from '@latchkey/protocol'
import { useCallback, useEffect, useId, useMemo, useRef, useState } from 'react'
import type { Session } from '../../react/index.ts'
import { errorCodeOf } from '../ui/errorMessage.ts'
import type { Ui } from '../ui/useUi.ts'
import type { AuthFlow, AuthStep } from './AuthFlowContext.ts'
import type { AuthKey } from './authStrings.ts'
import { deviceName } from './deviceName.ts'
import { useSignInActions } from './useSignInActions.ts'

/** Default display order of the sign-in methods. */
export const DEFAULT_METHOD_ORDER: readonly SignInMethod[] = [
  'email',
  'sms',
  'passkey',
  'google',
  'apple',
  'x',
  'discord',
  'facebook',
  'wallet',
]

export interface AuthResult {
  session: Session
  /** True when this sign-in created the account. */
  isNewUser: boolean
}

export interface AuthFlowOptions {
  ui: Ui<AuthKey>
  /**
   * Which methods to offer and in what order. Only methods the service enables are shown.
   * @default every enabled method, in the order email, sms, passkey, google, apple, x, discord, facebook, wallet
   */
  methods?: readonly SignInMethod[]
  /**
   * Offer new accounts to add a passkey right after sign-up (when passkeys are enabled).
   * @default true
   */
  offerPasskey?: boolean
  /**
   * End with the "You’re signed in" step and its Done button. When `false`, the flow ends as soon
   * as the person is signed in (and has answered the passkey offer, if shown): `onDone` is called
   * right away.
   * @default true
   */
  showSuccess?: boolean
  /** Called once a session exists (before the passkey offer and the success step). */
  onSuccess?: (result: AuthResult) => void
  /**
   * Called when the flow is over: Done on the success step, or, with `showSuccess: false`, right
   * after sign-in (and the passkey offer).
   */
  onDone?: () => void
  /** Called when the person leaves the flow. Without it, an inline form has no close button. */
  onCancel?: () => void
  /**
   * Name of the user a passkey sign-up creates (shown by the authenticator; they can change it in
   * `<UserProfile/>`).
   * @default with the device, e.g. `Passkey user (Chrome on macOS)` (`Passkey user` when unknown)
   */
  passkeyUserName?: () => string
  /** Id for the current step's title. @default a generated id */
  titleId?: string
}

const defaultUserName = () => {
  const device = deviceName()
  return device ? `Passkey user (${device})` : 'Passkey user'
}

/** Enabled methods, filtered and ordered by the app's choice. */
export function orderMethods(
  enabled: readonly string[],
  preferred?: readonly SignInMethod[],
): SignInMethod[] {
  const known = new Set<string>(SIGN_IN_METHODS)
  const on = new Set(enabled.filter((m) => known.has(m)))
  return (preferred ?? DEFAULT_METHOD_ORDER).filter((m, i, all) => on.has(m) && all.indexOf(m) === i)
}

/**
 * The sign-in state machine behind `<AuthModal/>` and `<AuthForm/>`: which step is shown, what
 * is running, the last error, and back/cancel. Every request goes through the public sign-in
 * hooks (see `useSignInActions`).
 */
export function useAuthFlow(options: AuthFlowOptions): AuthFlow {
  const { ui } = options
  const generatedId = useId()
  const [history, setHistory] = useState<AuthStep[]>([{ name: 'methods', channel: 'email' }])
  const step = history[history.length - 1]!
  const actions = useSignInActions({ discoverWallets: step.name === 'wallet' })
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const [pendingWalletId, setPendingWalletId] = useState<string | null>(null)
  const [captchaToken, setCaptchaToken] = useState<string | null>(null)
  const abort = useRef<AbortController | null>(null)
  const optionsRef = useRef(options)
  optionsRef.current = options

  // Requests of a step the person left are abandoned, never shown on another step.
  useEffect(() => () => abort.current?.abort(), [])

  const go = useCallback((next: AuthStep, replace = false) => {
    setError(null)
    setHistory((h) => (replace ? [...h.slice(0, -1), next] : [...h, next]))
  }, [])

  const run = useCallback(async <T>(task: (signal: AbortSignal) => Promise<T>): Promise<T | undefined> => {
    abort.current?.abort()
    const controller = new AbortController()
    abort.current = controller
    setBusy(true)
    setError(null)
    try {
      return await task(controller.signal)
    } catch (caught) {
      if (!controller.signal.aborted) setError(caught)
      return undefined
    } finally {
      if (abort.current === controller) {
        abort.current = null
        setBusy(false)
      }
    }
  }, [])

  // The last step: the success step, which also ends the flow at once without `showSuccess`.
  const signedIn = useCallback((isNewUser: boolean) => {
    setError(null)
    setHistory([{ name: 'success', isNewUser }])
    if (optionsRef.current.showSuccess === false) optionsRef.current.onDone?.()
  }, [])

  const succeed = useCallback(
    (result: { session: Session; created: boolean }, via: 'otp' | 'wallet' | 'passkey' | OAuthMethod) => {
      optionsRef.current.onSuccess?.({ session: result.session, isNewUser: result.created })
      // An account made with a passkey already has one.
      const offer =
        via !== 'passkey' &&
        result.created &&
        optionsRef.current.offerPasskey !== false &&
        actions.enabledMethods.includes('passkey') &&
        actions.passkeySupported
      if (!offer) return signedIn(result.created)
      setError(null)
      setHistory([{ name: 'offer-passkey', via }])
    },
    [actions, signedIn],
  )

  const methods = useMemo(
    () => orderMethods(actions.enabledMethods, options.methods),
    [actions.enabledMethods, options.methods],
  )

  // Sends a code with the solved check's token, if any (without one the service budgets the send
  // as usual). The token is spent by sending it (siteverify accepts each one once): the widget
  // resets for the next send.
  const sendOtp = (otpType: OtpType, contact: string) => {
    setCaptchaToken(null)
    return run((signal) =>
      actions.startOtp({ otpType, contact, captchaToken: captchaToken ?? undefined, signal }),
    )
  }

  const back =
    history.length > 1 && step.name !== 'success' && step.name !== 'offer-passkey'
      ? () => {
          abort.current?.abort()
          setBusy(false)
          setError(null)
          setPendingWalletId(null)
          setHistory((h) => h.slice(0, -1))
        }
      : undefined

  return {
    ui,
    titleId: options.titleId ?? generatedId,
    methods,
    config: actions.config,
    devOutboxUrl: actions.devOutboxUrl,
    otp: actions.otp,
    step,
    busy,
    error,
    clearError: () => setError(null),
    back,
    cancel: options.onCancel
      ? () => {
          abort.current?.abort()
          options.onCancel?.()
        }
      : undefined,
    setChannel: (channel) => {
      setError(null)
      setHistory((h) => [...h.slice(0, -1), { name: 'methods', channel }])
    },
    captcha: actions.captcha && { ...actions.captcha, token: captchaToken, setToken: setCaptchaToken },
    startOtp: async (channel, contact) => {
      const started = await sendOtp(channel === 'sms' ? 'OTP_TYPE_SMS' : 'OTP_TYPE_EMAIL', contact)
      if (!started) return
      go({ name: 'otp', channel, contact: started.contact })
    },
    verifyOtp: async (code) => {
      if (!actions.pendingOtp) return
      const result = await run((signal) => actions.completeOtp({ otpCode: code, signal }))
      if (result) succeed(result, 'otp')
    },
    resendOtp: async () => {
      const current = actions.pendingOtp
      if (!current) return false
      const started = await sendOtp(current.otpType, current.contact)
      return started !== undefined
    },
    startOAuth: async (method: OAuthMethod, { redirect = false } = {}) => {
      go({ name: 'oauth', method, status: redirect ? 'redirecting' : 'waiting' }, step.name === 'oauth')
      let blocked = false
      const result = await run(async (signal) => {
        try {
          return await actions.oauth({
            provider: method,
            onPopupBlocked: redirect ? 'redirect' : 'error',
            signal,
          })
        } catch (caught) {
          if (errorCodeOf(caught) === 'POPUP_BLOCKED') blocked = true
          throw caught
        }
      })
      if (blocked) setHistory((h) => [...h.slice(0, -1), { name: 'oauth', method, status: 'blocked' }])
      if (result) succeed(result, method)
    },
    startPasskey: async (mode) => {
      go({ name: 'passkey', mode }, step.name === 'passkey')
      const result = await run((signal) =>
        mode === 'sign-up'
          ? actions.passkeySignUp({
              signal,
              userName: optionsRef.current.passkeyUserName?.() ?? defaultUserName(),
              // The passkey itself by where it was made, as the profile lists it ("Chrome on macOS").
              authenticatorName: deviceName(),
            })
          : actions.passkeySignIn({ signal }),
      )
      if (result) succeed(result, 'passkey')
    },
    openWallets: () => go({ name: 'wallet' }),
    wallets: actions.wallets,
    pendingWalletId,
    startWallet: async (walletId) => {
      setPendingWalletId(walletId)
      const result = await run((signal) => actions.walletSignIn({ walletId, signal }))
      setPendingWalletId(null)
      if (result) succeed(result, 'wallet')
    },
    addPasskey: async () => {
      const added = await run(async (signal) => {
        await actions.addPasskey({ signal })
        return true
      })
      if (added) signedIn(true)
    },
    finish: () => {
      if (step.name === 'offer-passkey') return signedIn(true)
      optionsRef.current.onDone?.()
    },
  }
}
