import type { ProxyResponse } from '@latchkey/protocol'

/**
 * `POST /v1/wallet_kit_client_params`: what the published clients fetch at start-up beside
 * `wallet_kit_config`. Its one field is a Turnstile site key for bot checks; this service runs
 * none, so the answer is empty (the clients then skip the captcha).
 */
export function walletKitClientParams(): ProxyResponse<'wallet_kit_client_params'> {
  return {}
}
