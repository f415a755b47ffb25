import { type ReactNode, Suspense } from 'react'
import type { SignInMethod } from '../../protocol/index.ts'
import type { UiOptions } from '../ui/uiOptions.ts'
import { type Ui, useUi } from '../ui/useUi.ts'
import { type AuthFlow, AuthFlowContext } from './AuthFlowContext.ts'
import { EmailStep, MethodStep, OAuthButtons, PhoneStep } from './MethodStep.tsx'
import { OtpStep } from './OtpStep.tsx'
import { OAuthStep, PasskeyStep, SuccessStep, WalletStep } from './StatusSteps.tsx'
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

/** Runs the flow and provides it to the steps. */
export function AuthFlowRoot({
  ui,
  options,
  children,
}: {
  ui: Ui
  options: Omit<AuthFlowOptions, 'ui'>
  children?: AuthFormProps['children']
}) {
  const flow = useAuthFlow({ ...options, ui })
  return (
    <AuthFlowContext.Provider value={flow}>
      {children ? children(flow) : <AuthSteps flow={flow} />}
    </AuthFlowContext.Provider>
  )
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
  const ui = useUi({ theme, locale, messages, accent, radius, font })
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
