import { lazy, Suspense } from 'react'
import type { SecuritySettingsProps } from './SecuritySettingsProps.ts'

// The whole drop-in is its own chunk: an app pays for it only where it renders it. The
// authenticator-app enrolment (with the QR encoder) is a further chunk of its own.
const SecurityPanel = lazy(() => import('./SecurityPanel.tsx').then((m) => ({ default: m.SecurityPanel })))

export type { SecuritySettingsProps }

/**
 * The signed-in user's security settings: their second factors (passkeys, authenticator apps,
 * recovery codes left), enrolment of an authenticator app with a QR code and the `otpauth://`
 * link, recovery codes shown once (copy, download), and when to ask for a second factor, in words
 * ("exporting needs a second factor", "sends above an amount need a passkey"). Changes the user's
 * MFA policies guard ask for that factor first (the step-up challenge).
 */
export function SecuritySettings(props: SecuritySettingsProps) {
  return (
    <Suspense fallback={null}>
      <SecurityPanel {...props} />
    </Suspense>
  )
}
