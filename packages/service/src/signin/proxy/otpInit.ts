import { CAPTCHA_TOKEN_HEADER, OTP_TYPES, type OtpType, type ProxyResponse } from '@latchkey/protocol'
import type { Reader } from '../../kernel/Reader.ts'
import { clientAddress } from '../../pipeline/originPolicy.ts'
import { addressBudgetKey, ipv6NetworkKeys } from '../../pipeline/rateLimit.ts'
import { verifyCaptcha } from '../captcha/verifyCaptcha.ts'
import { signInState } from '../signInState.ts'
import type { ProxyCall } from './ProxyCall.ts'

/** Codes one client address (an IPv6 client's /64) may request through the proxy, whatever the contacts. */
export const OTP_INIT_PER_ADDRESS = { perMinute: 20, perWindow: 200 }
/**
 * Codes one IPv6 /56 may request (a household's usual delegation, or a cloud tenant's): more than
 * one /64's, so a second device of the home still gets codes when one spent its /64's.
 */
export const OTP_INIT_PER_56 = { perMinute: 30, perWindow: 300 }
/**
 * Codes one IPv6 /48 may request (an office's or a campus's delegation, or a provider's block of
 * tenants): twice a /56's, so one /56 leaves its neighbours half. With a code kept 15 minutes (a
 * 5-minute lifetime and 10 minutes after it), a /48 holds about 150 codes at once, so filling the
 * service's store of codes (`[otp] max_pending_codes`, 200,000) takes more than 1,300 of them.
 */
export const OTP_INIT_PER_48 = { perMinute: 60, perWindow: 600 }

/**
 * The budgets an `otp_init` from `address` is charged to: the address (an IPv6 one by its /64),
 * and an IPv6 one also by its /56 and its /48, which one holder gets whole and routinely (a cloud
 * tenant, a tunnel broker): without them 256 /64s of one /56 buy 256 address budgets.
 */
export function otpInitBudgets(address: string) {
  const budgets = [
    {
      key: `address:${addressBudgetKey(address)}`,
      limit: OTP_INIT_PER_ADDRESS,
      message: 'too many codes requested from this address; try again later',
    },
  ]
  const networks = ipv6NetworkKeys(address)
  if (networks)
    budgets.push(
      {
        key: `network:${networks.slash56}`,
        limit: OTP_INIT_PER_56,
        message: 'too many codes requested from this network (/56); try again later',
      },
      {
        key: `network:${networks.slash48}`,
        limit: OTP_INIT_PER_48,
        message: 'too many codes requested from this network (/48); try again later',
      },
    )
  return budgets
}

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
 * Besides the per-contact budget of `init_otp`, the caller's address (an IPv6 one by its /64, its
 * /56 and its /48: `otpInitBudgets`) has its own (kept in the store, so every instance shares
 * them), so one client cannot spray codes across many contacts, nor one network fill the store.
 */
export async function otpInit(call: ProxyCall, r: Reader): Promise<ProxyResponse<'otp_init'>> {
  const otpType = r.enum('otpType', OTP_TYPES)
  call.requireMethod(
    otpType === 'OTP_TYPE_EMAIL' ? 'email' : 'sms',
    otpType === 'OTP_TYPE_EMAIL' ? 'e-mail OTP' : 'SMS OTP',
  )
  const contact = r.string('contact', { max: 320 })
  // Undefined only for an in-process call; a network client whose address is unknown (it reset its
  // connection) is refused here, never sent a code for free.
  const address = clientAddress(call.c)
  if (address !== undefined) await signInState(call.runtime).otp.charge(otpInitBudgets(address))
  const captchaPass = await passCaptcha(call, otpType, contact, address)
  const { otpId } = await call.submit('init_otp', {
    otpType,
    contact,
    ...(captchaPass ? { captchaPass } : {}),
  })
  return { otpId }
}
