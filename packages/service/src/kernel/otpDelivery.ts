import type { OtpType } from '@latchkey/protocol'
import { PluginStateKey } from './Runtime.ts'

/**
 * What the sign-in wing (which commits one-time codes) and the delivery wing (which sends them)
 * share, so that neither imports the other: the job's kind and payload, and the delivery wing's
 * state, which tells sign-in which channels have a real provider.
 */

/** The job kind of one OTP message. */
export const OTP_DELIVERY_JOB = 'otp.deliver'

/** What a delivery job holds (sealed at rest: it carries the code and the contact). */
export interface OtpDeliveryPayload {
  otpType: OtpType
  to: string
  code: string
  appName: string
  expiresInMinutes: number
  /** The proxy settings' rendering, used where the operator set no delivery template. */
  subject: string
  body: string
}

/** Which channels the delivery wing sends itself. */
export interface OtpChannels {
  /**
   * True when `otpType`'s channel has a provider: its code is committed with an
   * `OTP_DELIVERY_JOB` job. Otherwise it goes to the dev outbox.
   */
  handles(otpType: OtpType): boolean
}

/** Where the runtime keeps the delivery wing's `OtpChannels`. */
export const OTP_CHANNELS = new PluginStateKey<OtpChannels>('delivery')
