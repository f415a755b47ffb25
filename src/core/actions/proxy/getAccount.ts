import type { ProxyRequest, ProxyResponse } from '@latchkey/protocol'
import { proxy } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'

export type GetAccountParameters = ProxyRequest<'account'>
export type GetAccountReturnType = ProxyResponse<'account'>

/** Auth proxy \`/v1/account\`: the organization id of an existing account, or null. */
export function getAccount(
  client: Latchkey,
  parameters: GetAccountParameters,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<GetAccountReturnType> {
  return proxy(client, 'account', parameters, options)
}
