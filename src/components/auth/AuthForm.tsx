import type { SignInMethod } from '@latchkey/protocol'
import { lazy, type ReactNode, Suspense, useLayoutEffect, useRef } from 'react'
import { Spinner } from '../ui/parts.tsx'
import type { UiOptions } from '../ui/uiOptions.ts'
import { type Ui, useUi } from '../ui/useUi.ts'
import { type AuthFlow, AuthFlowContext } from './AuthFlowContext.ts'
import { EmailStep, MethodStep, OAuthButtons, PhoneStep } from './MethodStep.tsx'

// Steps after the first screen load on demand (prefetched while the first screen is shown), so
// the start-up bundle holds only what the first screen needs.
const loadOtp = () => import('./OtpStep.tsx')
const loadStatus = () => import('./StatusSteps.tsx')
const OtpStep = lazy(() => loadOtp().then((m) => ({ default: m.OtpStep })))
const OAuthStep = lazy(() => loadStatus().then((m) => ({ default: m.OAuthStep })))
const PasskeyStep = lazy(() => loadStatus().then((m) => ({ default: m.PasskeyStep })))
const WalletStep = lazy(() => loadStatus().then((m) => ({ default: m.WalletStep })))
const SuccessStep = lazy(() => loadStatus().then((m) => ({ default: m.SuccessStep })))

/** Starts loading the later steps without rendering them. */
export const prefetchSteps = () => {
  void loadOtp()
  void loadStatus()
}

function StepFallback() {
  return (
    <div className="lk-panel" aria-busy="true">
      <div className="lk-center" style={{ minBlockSize: 200, justifyContent: 'center' }}>
        <Spinner size="lg" />
      </div>
    </div>
  )
}

import { type AuthKey, authUiStrings } from './authStrings.ts'
import { type AuthFlowOptions, useAuthFlow } from './useAuthFlow.ts'

export interface AuthFormProps extends UiOptions, Omit<AuthFlowOptions, 'ui'> {
  /** Replaces the built-in step layout; render the exported steps (`AuthModal.OtpStep` …) yourself. */
  children?: (flow: AuthFlow) => ReactNode
  /** Extra class on the outer element. */
  className?: string
}

/** Renders the step the flow is on. */
export function AuthSteps({ flow }: { flow: AuthFlow }) {
  switch (flow.step.name) {
    case 'methods':
      return <MethodStep />
    case 'otp':
      return <OtpStep />
    case 'oauth':
      return <OAuthStep />
    case 'passkey':
      return <PasskeyStep />
    case 'wallet':
      return <WalletStep />
    case 'offer-passkey':
    case 'success':
      return <SuccessStep />
  }
}

/**
 * Moves focus into each new step, as the WAI-ARIA dialog pattern asks: onto its
 * `[data-lk-autofocus]` control (the success step's "Done", the passkey offer's "Not now"), else
 * onto whatever the step focused itself (the code's first digit), else onto its heading. The first
 * step is left alone (the modal focuses it on open; an inline form must not steal focus on mount).
 * It sits in the same Suspense boundary as the step, so a step that loads lazily is focused once it
 * shows. Inside an open dialog it also puts back focus that fell to `<body>` (the focused control
 * was replaced or hidden by a re-render): checked after every render of the flow, not only on a
 * step change.
 */
function StepFocus({ step }: { step: string }) {
  const ref = useRef<HTMLSpanElement>(null)
  const focused = useRef<string | null>(null)
  useLayoutEffect(() => {
    const container = ref.current?.parentElement
    if (!container) return
    if (focused.current === null) {
      focused.current = step
      return
    }
    const lost =
      (!document.activeElement || document.activeElement === document.body) &&
      container.closest('dialog')?.open === true
    if (focused.current === step && !lost) return
    const active = document.activeElement
    const target =
      container.querySelector<HTMLElement>('[data-lk-autofocus]:not([disabled])') ??
      (active && active !== container && container.contains(active) ? null : container.querySelector('h2'))
    target?.focus()
    // Only a step that really got focus counts as done (a hidden, suspended step is retried on show).
    if (document.activeElement && container.contains(document.activeElement)) focused.current = step
  })
  return <span ref={ref} hidden />
}

/** Runs the flow and provides it to the steps. */
export function AuthFlowRoot({
  ui,
  options,
  children,
}: {
  ui: Ui<AuthKey>
  options: Omit<AuthFlowOptions, 'ui'>
  children?: AuthFormProps['children']
}) {
  const flow: AuthFlow = { ...useAuthFlow({ ...options, ui }), prefetch: prefetchSteps }
  return (
    <AuthFlowContext.Provider value={flow}>
      {/* Inside the dialog, so a step that is still loading never unmounts the dialog itself. */}
      <Suspense fallback={<StepFallback />}>
        {children ? children(flow) : <AuthSteps flow={flow} />}
        <StepFocus step={flow.step.name} />
      </Suspense>
    </AuthFlowContext.Provider>
  )
}

/**
 * `<AuthModal/>`'s body, loaded when the modal may open: it resolves its own look and language with
 * the whole dictionary (the trigger's start-up code carries only its own strings).
 */
export function AuthModalBody({
  uiOptions,
  ...rest
}: {
  uiOptions: UiOptions
  options: Omit<AuthFlowOptions, 'ui'>
  children?: AuthFormProps['children']
}) {
  const ui = useUi(uiOptions, authUiStrings)
  return <AuthFlowRoot ui={ui} {...rest} />
}

/**
 * The sign-in flow inline, for an app's own sign-in page: the same steps as `<AuthModal/>`,
 * without the dialog.
 */
export function AuthForm(props: AuthFormProps) {
  return (
    <Suspense fallback={null}>
      <AuthFormInner {...props} />
    </Suspense>
  )
}

function AuthFormInner({
  theme,
  locale,
  messages,
  accent,
  radius,
  font,
  children,
  className,
  ...options
}: AuthFormProps) {
  const ui = useUi({ theme, locale, messages, accent, radius, font }, authUiStrings)
  return (
    <section
      {...ui.rootProps}
      className={`${ui.rootProps.className} lk-card${className ? ` ${className}` : ''}`}
      style={{ ...ui.rootProps.style, padding: 0, maxInlineSize: 400 }}
    >
      <AuthFlowRoot ui={ui} options={options}>
        {children}
      </AuthFlowRoot>
    </section>
  )
}

export const authSteps = {
  MethodStep,
  EmailStep,
  PhoneStep,
  OAuthButtons,
  OtpStep,
  OAuthStep,
  PasskeyStep,
  WalletStep,
  SuccessStep,
}
export type { SignInMethod }
