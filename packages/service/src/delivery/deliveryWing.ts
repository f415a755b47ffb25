import { OTP_CHANNELS, OTP_DELIVERY_JOB, type OtpChannels } from '../kernel/otpDelivery.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { ServicePlugin } from '../kernel/registry.ts'
import { checkDeliveryOptions, createDelivery, type Delivery } from './createDelivery.ts'
import type { DeliveryOptions } from './DeliveryOptions.ts'

/** What `createService` takes for the delivery wing. */
export interface DeliveryWingOptions {
  /**
   * Real delivery of one-time codes: e-mail over SMTP (with `mailer: smtpMailer` from
   * `@latchkey/service/node`) and SMS through Twilio or a signed webhook. A code for a channel with
   * a provider is committed with a delivery job and sent after the commit by one instance.
   * @default none: every code goes to the dev outbox
   */
  delivery?: DeliveryOptions
}

/** No provider for any channel: every code goes to the dev outbox. */
const NO_CHANNELS: OtpChannels = { handles: () => false }

/**
 * The delivery wing: tells the others which channels have a real provider (`OTP_CHANNELS`, read by
 * sign-in when it commits a code) and runs the `otp.deliver` jobs that send them. Without
 * `delivery` it sends nothing and registers no job handler. The options are checked here, before
 * the service opens anything (`TemplateError`, `DeliveryConfigError` name the field).
 */
export function deliveryWing({ delivery: options }: DeliveryWingOptions = {}): ServicePlugin<OtpChannels> {
  if (options) checkDeliveryOptions(options)
  // Per service: the factory is called once per `createService`.
  const compiled = new WeakMap<Runtime, Delivery>()
  return {
    name: 'delivery',
    state: {
      key: OTP_CHANNELS,
      load(runtime) {
        if (!options) return NO_CHANNELS
        const delivery = createDelivery(options, {
          events: { emit: (name, data) => runtime.emit(name, data) },
          now: () => runtime.now(),
          fetch: (input, init) => runtime.options.fetch(input, init),
        })
        compiled.set(runtime, delivery)
        runtime.jobs.handle(OTP_DELIVERY_JOB, delivery.handler)
        return { handles: (otpType) => delivery.handles(otpType) }
      },
    },
    close(runtime) {
      compiled.get(runtime)?.close()
    },
  }
}
