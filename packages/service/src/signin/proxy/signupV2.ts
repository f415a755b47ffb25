import type { ProxyResponse } from '@latchkey/protocol'
import type { Reader } from '../../kernel/Reader.ts'
import type { ProxyCall } from './ProxyCall.ts'
import { signup } from './signup.ts'

/** `POST /v1/signup_v2`: `signup` as the published clients send it; the wallet also as `wallet`. */
export async function signupV2(call: ProxyCall, r: Reader): Promise<ProxyResponse<'signup_v2'>> {
  const result = await signup(call, r)
  return {
    ...result,
    ...(result.walletId !== undefined
      ? { wallet: { walletId: result.walletId, addresses: result.addresses ?? [] } }
      : {}),
  }
}
