import { lazy, Suspense } from 'react'
import type { SpendingLimitsProps } from './SpendingLimitsProps.ts'

// The whole drop-in is its own chunk: an app pays for it only where it renders it.
const SpendingLimitsPanel = lazy(() =>
  import('./SpendingLimitsPanel.tsx').then((m) => ({ default: m.SpendingLimitsPanel })),
)

export type { SpendingLimitsProps }

/**
 * The signed-in user's spending limits on their whole account: each limit on the user or on one of
 * their wallet accounts, per chain, asset and window, with what is used and left ("0.35 ETH left
 * today") and when it frees; and setting, changing and removing one. A change an MFA policy holds
 * (raising a limit, typically) asks for the second factor first (the step-up challenge). Agents'
 * allowances are `<AgentAllowance/>`'s, not listed here.
 */
export function SpendingLimits(props: SpendingLimitsProps) {
  return (
    <Suspense fallback={null}>
      <SpendingLimitsPanel {...props} />
    </Suspense>
  )
}
