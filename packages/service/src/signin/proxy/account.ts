import { ACCOUNT_FILTER_TYPES, type ProxyResponse } from '@latchkey/protocol'
import type { Reader } from '../../kernel/Reader.ts'
import type { ProxyCall } from './ProxyCall.ts'

/** `POST /v1/account`: the sub-organization of an e-mail, phone number, OIDC token or public key, or null. */
export async function account(call: ProxyCall, r: Reader): Promise<ProxyResponse<'account'>> {
  const filterType = r.enum('filterType', ACCOUNT_FILTER_TYPES)
  const filterValue = r.string('filterValue', { max: 8192 })
  return { organizationId: await call.findSubOrganization(filterType, filterValue) }
}
