import type { Latchkey } from '../../types.ts'

/**
 * `otp_init_v2` target bundles by OTP id, per client instance (no module-level state shared
 * between clients), so `completeOtpSignIn({ otpId, … })` finds the bundle its code goes to.
 * Bounded: the newest few sign-ins only.
 */
const byClient = new WeakMap<Latchkey, Map<string, string>>()
const KEPT = 8

export const otpTargets = {
  remember(client: Latchkey, otpId: string, bundle: string): void {
    const targets = byClient.get(client) ?? new Map<string, string>()
    byClient.set(client, targets)
    targets.set(otpId, bundle)
    while (targets.size > KEPT) targets.delete(targets.keys().next().value!)
  },
  take(client: Latchkey, otpId: string): string | undefined {
    const targets = byClient.get(client)
    const bundle = targets?.get(otpId)
    targets?.delete(otpId)
    return bundle
  },
}
