import type { ProxyResponse } from '@latchkey/protocol'
import { signInState } from '../signInState.ts'
import type { ProxyCall } from './ProxyCall.ts'

/**
 * `POST /v1/wallet_kit_client_params`: what the published clients fetch at start-up beside
 * `wallet_kit_config`. Its one field is a Turnstile site key: given when the operator configured
 * Turnstile (the published clients render only Turnstile), else empty and the clients skip it.
 */
export function walletKitClientParams(call: ProxyCall): ProxyResponse<'wallet_kit_client_params'> {
  const { captcha } = signInState(call.runtime).options
  return captcha?.provider === 'turnstile' ? { turnstileSiteKey: captcha.siteKey } : {}
}
