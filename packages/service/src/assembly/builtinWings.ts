import { type DeliveryWingOptions, deliveryWing } from '../delivery/deliveryWing.ts'
import { secretFramePlugin } from '../frames/secretFrame.ts'
import { importingWing } from '../importing/importingWing.ts'
import type { ServicePlugin } from '../kernel/registry.ts'
import { type LimitsWingOptions, limitsWing } from '../limits/limitsWing.ts'
import type { MfaWingOptions } from '../mfa/mfaState.ts'
import { mfaWing } from '../mfa/mfaWing.ts'
import type { PipelineOptions } from '../pipeline/RateLimitOptions.ts'
import { SENDING_WING, type SendingWingOptions, sendingWing } from '../sending/sendingWing.ts'
import type { SignInWingOptions } from '../signin/SignInWingOptions.ts'
import { signInWing } from '../signin/signInWing.ts'
import { type WebhooksWingOptions, webhooksWing } from '../webhooks/webhooksWing.ts'

/** `createService`'s options for the sending wing: its own, but the senders (`sendingWing({ senders })`). */
export type SendingServiceOptions = Omit<SendingWingOptions, 'senders'>

/** What the built-in wings are built from (`createService`'s options of the same names). */
export type BuiltinWingsOptions = SignInWingOptions &
  DeliveryWingOptions &
  SendingServiceOptions &
  MfaWingOptions &
  LimitsWingOptions &
  WebhooksWingOptions &
  Pick<PipelineOptions, 'rateLimits'> & {
    /** The plugins `createService` appends: one named `sending` replaces the built-in sending wing. */
    plugins?: readonly ServicePlugin[]
  }

/**
 * The wings every service loads, each built from its own options: the export/import frames,
 * delivery of one-time codes (before sign-in, which commits them), sign-in (the auth proxy,
 * OTP, OAuth, dev routes and settings), which also takes the auth proxy's per-address budget, and
 * sending, unless `plugins` bring their own (`sendingWing({ senders })`, which then takes `rpc`,
 * `sending` and `sponsorship` itself). `createService({ plugins })` appends those after these.
 */
export function builtinWings(options: BuiltinWingsOptions = {}): ServicePlugin[] {
  const { oauth, captcha, smsBudget, otpCaps, delivery, rateLimits } = options
  return [
    secretFramePlugin,
    deliveryWing(delivery ? { delivery } : {}),
    signInWing({
      ...(oauth ? { oauth } : {}),
      ...(captcha ? { captcha } : {}),
      ...(smsBudget ? { smsBudget } : {}),
      ...(otpCaps ? { otpCaps } : {}),
      ...(rateLimits ? { rateLimits } : {}),
    }),
    ...builtinSendingWing(options),
    // ---- wing: spending limits (issue 37) ----
    limitsWing(options.limits ? { limits: options.limits } : {}),
    // ---- wing: MFA (issue 38) ----
    mfaWing(options.mfa ?? {}),
    // ---- wing: webhooks (issue 39) ----
    webhooksWing(options.webhooks ? { webhooks: options.webhooks } : {}),
    // ---- wing: import and pregeneration (issue 40) ----
    importingWing(),
  ]
}

/** The sending wing made of `rpc`, `sending` and `sponsorship`, or none when `plugins` bring one. */
function builtinSendingWing(options: BuiltinWingsOptions): ServicePlugin[] {
  const { rpc, sending, sponsorship } = options
  if (!(options.plugins ?? []).some((plugin) => plugin.name === SENDING_WING))
    return [
      sendingWing({
        ...(rpc ? { rpc } : {}),
        ...(sending ? { sending } : {}),
        ...(sponsorship ? { sponsorship } : {}),
      }),
    ]
  const misplaced = (['rpc', 'sending', 'sponsorship'] as const).filter((name) => options[name] !== undefined)
  if (misplaced.length > 0)
    throw new Error(
      `${misplaced.join(', ')}: give ${misplaced.length > 1 ? 'them' : 'it'} to the sendingWing(...) passed in plugins, not to createService`,
    )
  return []
}
