// `otp_init` as the rate-limit tests send it: straight to the app, from the socket peer they name.
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import type { Harness, Json } from '../../src/testing/harness.ts'

/** `otp_init` through the auth proxy for `contact`, from `address` (as the Node server hands it over). */
export async function otpInit(
  h: Harness,
  contact: string,
  address: string,
): Promise<{ status: number; body: Json }> {
  const response = await h.service.app.request(
    '/v1/otp_init',
    {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
      },
      body: JSON.stringify({ otpType: 'OTP_TYPE_EMAIL', contact }),
    },
    { incoming: { socket: { remoteAddress: address } } },
  )
  return { status: response.status, body: await response.json() }
}
