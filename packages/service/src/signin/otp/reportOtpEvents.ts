import { ApiError } from '../../kernel/base/errors.ts'
import type { Runtime } from '../../kernel/Runtime.ts'
import type { OtpEngine } from './createOtpEngine.ts'

const channelOf = (otpType: string) => (otpType === 'OTP_TYPE_SMS' ? 'sms' : 'email')

/** The step a refused verification counts as (an unknown or used id is a failure too). */
const refusalOf = (error: unknown) =>
  error instanceof ApiError
    ? error.errorCode === 'OTP_ATTEMPTS_EXCEEDED'
      ? 'locked'
      : error.errorCode === 'OTP_RATE_LIMITED'
        ? 'rate_limited'
        : error.errorCode === 'OTP_INVALID' || error.errorCode === 'OTP_EXPIRED'
          ? 'failed'
          : undefined
    : undefined

/**
 * `engine` reporting each code sent, verified or refused as `signin.otp` (the channel only: never
 * the contact, the code or the token).
 */
export function reportOtpEvents(runtime: Runtime, engine: OtpEngine): OtpEngine {
  return {
    ...engine,
    async init(input) {
      const channel = channelOf(input.otpType)
      try {
        const sent = await engine.init(input)
        runtime.emit('signin.otp', { event: 'sent', channel })
        return sent
      } catch (error) {
        if (refusalOf(error) === 'rate_limited')
          runtime.emit('signin.otp', { event: 'rate_limited', channel })
        throw error
      }
    },
    async verify(input) {
      try {
        const verified = await engine.verify(input)
        runtime.emit('signin.otp', {
          event: 'verified',
          channel: channelOf(verified.claims.verification_type),
        })
        return verified
      } catch (error) {
        const event = refusalOf(error)
        if (event) runtime.emit('signin.otp', { event, channel: 'unknown' })
        throw error
      }
    },
  }
}
