import { ACCOUNT_FILTER_TYPES, type ProxyResponse } from '@latchkey/protocol'
import type { Reader } from '../../kernel/Reader.ts'
import { normalizeContact } from '../otp/normalizeContact.ts'
import type { ProxyCall } from './ProxyCall.ts'

/** `POST /v1/account`: the sub-organization of an e-mail, phone number, OIDC token or public key, or null. */
export async function account(call: ProxyCall, r: Reader): Promise<ProxyResponse<'account'>> {
  const filterType = r.enum('filterType', ACCOUNT_FILTER_TYPES)
  const filterValue = r.string('filterValue', { max: 8192 })
  // An address no account can hold (`kernel/emailAddress.ts`) is refused as `otp_init` refuses
  // it, rather than answered "no account", which would send the client on to sign it up.
  const value =
    filterType === 'EMAIL' ? normalizeContact('OTP_TYPE_EMAIL', filterValue, 'filterValue') : filterValue
  return { organizationId: await call.findSubOrganization(filterType, value) }
}
