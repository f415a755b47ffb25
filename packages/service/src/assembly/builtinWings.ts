import { type DeliveryWingOptions, deliveryWing } from '../delivery/deliveryWing.ts'
import { secretFramePlugin } from '../frames/secretFrame.ts'
import type { ServicePlugin } from '../kernel/registry.ts'
import type { PipelineOptions } from '../pipeline/RateLimitOptions.ts'
import type { SignInWingOptions } from '../signin/SignInWingOptions.ts'
import { signInWing } from '../signin/signInWing.ts'

/** What the built-in wings are built from (`createService`'s options of the same names). */
export type BuiltinWingsOptions = SignInWingOptions &
  DeliveryWingOptions &
  Pick<PipelineOptions, 'rateLimits'>

/**
 * The wings every service loads, each built from its own options: the export/import frames,
 * delivery of one-time codes (before sign-in, which commits them), and sign-in (the auth proxy,
 * OTP, OAuth, dev routes and settings), which also takes the auth proxy's per-address budget.
 * `createService({ plugins })` appends more after these.
 */
export function builtinWings(options: BuiltinWingsOptions = {}): ServicePlugin[] {
  const { oauth, captcha, delivery, rateLimits } = options
  return [
    secretFramePlugin,
    deliveryWing(delivery ? { delivery } : {}),
    signInWing({
      ...(oauth ? { oauth } : {}),
      ...(captcha ? { captcha } : {}),
      ...(rateLimits ? { rateLimits } : {}),
    }),
  ]
}
