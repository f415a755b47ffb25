import {
  lazy,
  type ReactNode,
  Suspense,
  useCallback,
  useEffect,
  useId,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
} from 'react'
import { LatchkeyError } from '../../core/baseErrors.ts'
import type { Latchkey, Session } from '../../react/index.ts'
import { useLatchkey, useSession, useSessionStatus } from '../../react/index.ts'
import type { enTrigger } from '../i18n/en/trigger.ts'
import { triggerStrings } from '../i18n/sections/trigger.ts'
import { Dialog } from '../ui/Dialog.tsx'
import { Button, Header, Spinner } from '../ui/parts.tsx'
import type { UiOptions } from '../ui/uiOptions.ts'
import { type Ui, useUi } from '../ui/useUi.ts'
import type { AuthFormProps, authSteps } from './AuthForm.tsx'
import type { AuthFlowOptions, AuthResult } from './useAuthFlow.ts'
import { useTriggerLogout } from './useTriggerLogout.ts'

// The dialog body (the steps, their icons, the flow and the full dictionary) is its own chunk: the
// start-up bundle holds only the trigger, the dialog shell and their few strings (`enTrigger`). It
// is prefetched on idle and when the trigger is hovered, focused or pressed, so opening normally
// finds it already loaded.
let bodyPromise: Promise<typeof import('./AuthForm.tsx')> | undefined
const loadBody = () => {
  bodyPromise ??= import('./AuthForm.tsx').catch((error: unknown) => {
    // A failed chunk load (offline, deploy in between) may be retried on the next open.
    bodyPromise = undefined
    throw error
  })
  return bodyPromise
}
const AuthModalBody = lazy(() => loadBody().then((m) => ({ default: m.AuthModalBody })))
type Steps = typeof authSteps
const lazyStep = <K extends keyof Steps>(name: K) =>
  lazy(() => loadBody().then((m) => ({ default: m.authSteps[name] as Steps[K] })))

/** Starts loading the dialog body without rendering it (idempotent). */
export const prefetchAuthModal = (): void => {
  loadBody().catch(() => {
    // Prefetching is best effort: opening the modal retries and shows the error there.
  })
}

const onIdle = (run: () => void): (() => void) => {
  if (typeof requestIdleCallback === 'function') {
    const handle = requestIdleCallback(run, { timeout: 2000 })
    return () => cancelIdleCallback(handle)
  }
  const timer = setTimeout(run, 200)
  return () => clearTimeout(timer)
}

/** Shown inside the open dialog while its body loads: titled, busy, and closable. */
function BodyLoading({
  ui,
  titleId,
  onClose,
}: {
  ui: Ui<keyof typeof enTrigger>
  titleId: string
  onClose: () => void
}) {
  return (
    <div className="lk-panel" aria-busy="true">
      <Header ui={ui} titleId={titleId} title={ui.t('signInTitle')} onClose={onClose} />
      <div className="lk-center" role="status" style={{ minBlockSize: 160, justifyContent: 'center' }}>
        <Spinner size="lg" />
        <span className="lk-muted">{ui.t('loading')}</span>
      </div>
    </div>
  )
}

/**
 * Commits together with the loaded body (same Suspense boundary): moves focus to the control the
 * first step names, unless the body's own `autoFocus` already put it inside the dialog.
 */
function FocusWhenReady() {
  const ref = useRef<HTMLSpanElement>(null)
  useLayoutEffect(() => {
    const dialog = ref.current?.closest('dialog')
    if (!dialog?.open) return
    const active = document.activeElement
    if (active && active !== dialog && dialog.contains(active)) return
    const target =
      dialog.querySelector<HTMLElement>('[data-lk-autofocus]') ??
      dialog.querySelector<HTMLElement>(
        'input, button:not([disabled]), [href], [tabindex]:not([tabindex="-1"])',
      )
    target?.focus()
  }, [])
  return <span ref={ref} hidden />
}

/** Thrown by `useAuthModal().open()` when the person closes the modal without signing in. */
export class AuthModalCancelledError extends LatchkeyError {
  override name = 'AuthModalCancelledError'
  constructor() {
    super('The sign-in modal was closed before signing in', { code: 'USER_CANCELLED' })
  }
}

interface Opener {
  open(): Promise<Session>
  close(): void
}
// The mounted modals of each client (keyed by instance, so several providers never mix).
const openers = new WeakMap<Latchkey, Opener[]>()

export interface AuthModalProps extends UiOptions, Omit<AuthFlowOptions, 'ui' | 'onCancel'> {
  /** Controlled open state; omit to let the modal manage it (with its own trigger). */
  open?: boolean
  /** Called whenever the modal asks to open or close. */
  onOpenChange?: (open: boolean) => void
  /**
   * The uncontrolled trigger: `false` hides it, a node replaces its label. While a session is
   * active it shows the signed-in account and a "Sign out" button instead; once the session has
   * expired it reads "Session expired — sign in again" (`sessionExpiredSignIn`).
   * @default a "Sign in" button
   */
  trigger?: ReactNode | false
  /** Replaces the built-in step layout (see `<AuthForm>`). */
  children?: AuthFormProps['children']
  /**
   * After a sign-up, offer the new account a passkey ("Sign in faster next time") before closing,
   * when the service enables passkeys and the browser supports them. `false` skips the offer.
   * @default true
   */
  offerPasskey?: boolean
  /**
   * End with a "You’re signed in" step and a Done button instead of closing once signed in.
   * @default false (the modal closes itself)
   */
  showSuccess?: boolean
}

/**
 * The sign-in modal. Renders exactly the methods `wallet_kit_config` enables (or `methods`), on
 * the native `<dialog>`: labelled, focus in and back to the trigger, Escape closes, page inert.
 * Once the person is signed in (and has answered the passkey offer a new account gets, unless
 * `offerPasskey={false}`), the modal closes itself and `useAuthModal().open()` has resolved with
 * the session; `showSuccess` ends with a confirmation step instead.
 */
export function AuthModal(props: AuthModalProps) {
  return (
    <Suspense fallback={null}>
      <AuthModalInner {...props} />
    </Suspense>
  )
}

function AuthModalInner(props: AuthModalProps) {
  const {
    theme,
    locale,
    messages,
    accent,
    radius,
    font,
    open: openProp,
    onOpenChange,
    trigger,
    children,
    ...options
  } = props
  const uiOptions = { theme, locale, messages, accent, radius, font }
  const ui = useUi(uiOptions, triggerStrings)
  const client = useLatchkey()
  // Only a session that can sign (`undefined` from the instant it expires).
  const account = useSession()
  const expired = useSessionStatus() === 'expired'
  const logout = useTriggerLogout()
  const titleId = useId()
  const [innerOpen, setInnerOpen] = useState(false)
  const controlled = openProp !== undefined
  const open = controlled ? openProp : innerOpen
  // Pending `useAuthModal().open()` promises, settled by sign-in or close.
  const waiters = useRef<{ resolve: (s: Session) => void; reject: (e: unknown) => void }[]>([])
  const signedIn = useRef(false)

  const setOpen = useCallback(
    (next: boolean) => {
      if (!controlled) setInnerOpen(next)
      onOpenChange?.(next)
      if (next) signedIn.current = false
      if (!next && !signedIn.current) {
        for (const waiter of waiters.current.splice(0)) waiter.reject(new AuthModalCancelledError())
      }
    },
    [controlled, onOpenChange],
  )

  // A controlled parent may close the modal itself: pending promises must not hang.
  useEffect(() => {
    if (!open && waiters.current.length && !signedIn.current)
      for (const waiter of waiters.current.splice(0)) waiter.reject(new AuthModalCancelledError())
  }, [open])

  useEffect(() => {
    const opener: Opener = {
      open: () =>
        new Promise<Session>((resolve, reject) => {
          waiters.current.push({ resolve, reject })
          setOpen(true)
        }),
      close: () => setOpen(false),
    }
    const list = openers.get(client) ?? []
    list.push(opener)
    openers.set(client, list)
    return () => {
      const current = openers.get(client) ?? []
      openers.set(
        client,
        current.filter((o) => o !== opener),
      )
    }
  }, [client, setOpen])

  useEffect(() => onIdle(prefetchAuthModal), [])

  const onSuccess = options.onSuccess
  const flowOptions = {
    ...options,
    showSuccess: options.showSuccess ?? false,
    onSuccess: (result: AuthResult) => {
      signedIn.current = true
      for (const waiter of waiters.current.splice(0)) waiter.resolve(result.session)
      onSuccess?.(result)
    },
    onDone: () => {
      setOpen(false)
      options.onDone?.()
    },
    onCancel: () => setOpen(false),
  }

  return (
    <>
      {!controlled && trigger !== false ? (
        <span {...ui.rootProps} className={`${ui.rootProps.className} lk-trigger-wrap`}>
          {account ? (
            <span className="lk-badge" data-tone="success" title={account.userId}>
              <span className="lk-dot" aria-hidden="true" />
              <span className="lk-visually-hidden">{ui.t('sessionActive')}: </span>
              {account.label ?? ui.t('sessionActive')}
            </span>
          ) : null}
          {/* One button in both states (same position), so focus returned to it after sign-in stays put. */}
          {account ? (
            <Button variant="secondary" loading={logout.isPending} onClick={logout.logout}>
              {ui.t('logOut')}
            </Button>
          ) : (
            <Button
              onClick={() => setOpen(true)}
              onPointerEnter={prefetchAuthModal}
              onPointerDown={prefetchAuthModal}
              onFocus={prefetchAuthModal}
              aria-haspopup="dialog"
            >
              {expired ? ui.t('sessionExpiredSignIn') : (trigger ?? ui.t('signIn'))}
            </Button>
          )}
        </span>
      ) : null}
      <Dialog open={open} onOpenChange={setOpen} labelledBy={titleId} ui={ui}>
        <Suspense fallback={<BodyLoading ui={ui} titleId={titleId} onClose={() => setOpen(false)} />}>
          <AuthModalBody uiOptions={uiOptions} options={{ ...flowOptions, titleId }}>
            {children}
          </AuthModalBody>
          <FocusWhenReady />
        </Suspense>
      </Dialog>
    </>
  )
}

// The steps for a custom layout (`children`), loaded with the body: they only ever render inside it.
AuthModal.MethodStep = lazyStep('MethodStep')
AuthModal.EmailStep = lazyStep('EmailStep')
AuthModal.PhoneStep = lazyStep('PhoneStep')
AuthModal.OAuthButtons = lazyStep('OAuthButtons')
AuthModal.OtpStep = lazyStep('OtpStep')
AuthModal.OAuthStep = lazyStep('OAuthStep')
AuthModal.PasskeyStep = lazyStep('PasskeyStep')
AuthModal.WalletStep = lazyStep('WalletStep')
AuthModal.SuccessStep = lazyStep('SuccessStep')

export interface UseAuthModalReturnType {
  /** Opens the mounted `<AuthModal/>`; resolves with the session, rejects with `AuthModalCancelledError`. */
  open(): Promise<Session>
  close(): void
}

/** Opens the `<AuthModal/>` mounted under the same `<LatchkeyProvider>` from anywhere. */
export function useAuthModal(): UseAuthModalReturnType {
  const client = useLatchkey()
  return useMemo(
    () => ({
      open: () => {
        const opener = openers.get(client)?.at(-1)
        if (!opener)
          return Promise.reject(
            new LatchkeyError('useAuthModal: render <AuthModal/> under the same <LatchkeyProvider>', {
              code: 'PROVIDER_MISSING',
            }),
          )
        return opener.open()
      },
      close: () => openers.get(client)?.at(-1)?.close(),
    }),
    [client],
  )
}
