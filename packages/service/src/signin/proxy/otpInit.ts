import { CAPTCHA_TOKEN_HEADER, OTP_TYPES, type OtpType, type ProxyResponse } from '@latchkey/protocol'
import type { Reader } from '../../kernel/Reader.ts'
import { clientAddress } from '../../pipeline/originPolicy.ts'
import { addressBudgetKey } from '../../pipeline/rateLimit.ts'
import { verifyCaptcha } from '../captcha/verifyCaptcha.ts'
import { signInState } from '../signInState.ts'
import type { ProxyCall } from './ProxyCall.ts'

/** Codes one client address may request through the proxy, whatever the contacts. */
export const OTP_INIT_PER_ADDRESS = { perMinute: 20, perWindow: 200 }

/**
 * With a CAPTCHA configured and the request's token passing it, a pass for `init_otp` that lets
 * the code skip the contact's send budget: the budget is what someone who knows the address
 * spends to keep its owner from getting a code. The code is charged to the contact's CAPTCHA
 * ceiling instead (`CaptchaOptions.perContact`). Without a token, or when it fails, none: the
 * request is budgeted as usual, never refused for it.
 */
async function passCaptcha(
  call: ProxyCall,
  otpType: OtpType,
  contact: string,
  address: string | undefined,
): Promise<string | undefined> {
  const state = signInState(call.runtime)
  const { captcha } = state.options
  const token = call.c.req.header(CAPTCHA_TOKEN_HEADER)
  if (!captcha || token === undefined) return undefined
  const passed = await verifyCaptcha(captcha, token, address, call.runtime.options.fetch)
  call.runtime.emit('otp.captcha', { provider: captcha.provider, passed })
  return passed ? state.otp.grantCaptchaPass(otpType, contact) : undefined
}

/**
 * `POST /v1/otp_init`: sends a one-time code to an e-mail address or phone number (`init_otp`).
 * Besides the per-contact budget of `init_otp`, the caller's address (an IPv6 one by its /64) has
 * its own (kept in the store), so one client cannot spray codes across many contacts.
 */
export async function otpInit(call: ProxyCall, r: Reader): Promise<ProxyResponse<'otp_init'>> {
  const otpType = r.enum('otpType', OTP_TYPES)
  call.requireMethod(
    otpType === 'OTP_TYPE_EMAIL' ? 'email' : 'sms',
    otpType === 'OTP_TYPE_EMAIL' ? 'e-mail OTP' : 'SMS OTP',
  )
  const contact = r.string('contact', { max: 320 })
  const address = clientAddress(call.c)
  if (address !== undefined)
    await signInState(call.runtime).otp.charge([
      {
        key: `address:${addressBudgetKey(address)}`,
        limit: OTP_INIT_PER_ADDRESS,
        message: 'too many codes requested from this address; try again later',
      },
    ])
  const captchaPass = await passCaptcha(call, otpType, contact, address)
  const { otpId } = await call.submit('init_otp', {
    otpType,
    contact,
    ...(captchaPass ? { captchaPass } : {}),
  })
  return { otpId }
}
