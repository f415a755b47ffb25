// `activity.params` as a policy reads it: the parameters as the handler acts on them, without what
// no reader of the activity may take. A policy's outcome is shown (`get_policy_evaluations`, a
// refusal, waiting or not), so a condition is a reader: one policy per character of a bearer
// value (`activity.params.verificationToken[0..1] == 'a'`) would read it out of another user's
// activity. And a value the handler canonicalises (a chain alias) is judged as it acts on it, so a
// DENY written with the canonical value holds however the caller spelt it.
import { type ActivityPath, SOLANA_CAIP2_ALIASES } from '@latchkey/protocol'

/**
 * The parameters no policy reads, by path: each handler's `bearerParameters`, `secretParameters`
 * and `clearedWhenDone` (kernel/registry.ts; a path goes through each item of a list with
 * `name[]`), which its record never shows either. Kept here, beside the other facts policies read
 * by path, since a stored activity is judged again without its handler at hand (a vote); its test
 * checks it against every handler registered.
 */
export const UNREAD_PARAMETERS: { readonly [P in ActivityPath]?: readonly string[] } = {
  // Bearer credentials the activity redeems (`bearerParameters`).
  oauth_login: ['oidcToken'],
  oauth2_authenticate: ['authCode', 'codeVerifier'],
  verify_otp: ['otpCode', 'encryptedOtpBundle'],
  otp_login: ['verificationToken', 'clientSignature'],
  create_oauth_providers: ['oauthProviders[].oidcToken'],
  create_sub_organization: ['verificationToken', 'clientSignature', 'rootUsers[].oauthProviders[].oidcToken'],
  update_user_phone_number: ['verificationToken', 'clientSignature'],
  update_user_email: ['verificationToken', 'clientSignature'],
  create_users: ['users[].oauthProviders[].oidcToken'],
  create_fiat_on_ramp_credential: ['encryptedSecretApiKey', 'encryptedPrivateApiKey'],
  latchkey_import_user: ['wallets[].encryptedBundle', 'privateKeys[].encryptedBundle'],
  // One-time codes (`secretParameters`).
  latchkey_confirm_totp_factor: ['code'],
  latchkey_satisfy_mfa: ['totpCode', 'recoveryCode', 'contactCode'],
  // Key material sealed to the enclave (`clearedWhenDone`).
  import_wallet: ['encryptedBundle'],
  import_private_key: ['encryptedBundle'],
}

/** `value` without `steps` (a field, or `name[]` through each item of a list). */
function without(value: unknown, steps: readonly string[]): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value
  const [step, ...rest] = steps as [string, ...string[]]
  const through = step.endsWith('[]')
  const field = through ? step.slice(0, -2) : step
  const object = value as Record<string, unknown>
  if (!Object.hasOwn(object, field)) return value
  const { [field]: inner, ...others } = object
  if (!through) return rest.length === 0 ? others : { ...others, [field]: without(inner, rest) }
  if (!Array.isArray(inner)) return value
  // Each item of the list: without the path's rest, or left out when the path ends at the item.
  return rest.length === 0 ? others : { ...others, [field]: inner.map((item) => without(item, rest)) }
}

/**
 * `intent` as a policy reads it under `activity.params`: without `UNREAD_PARAMETERS[path]`
 * (absent, so a condition reading one fails, `OUTCOME_ERROR`, whatever the value was), and with
 * `sol_send_transaction`'s chain alias as the CAIP-2 id it sends on.
 */
export function policyParamsOf(path: string, intent: Record<string, unknown>): Record<string, unknown> {
  let params = intent
  const unread = Object.hasOwn(UNREAD_PARAMETERS, path) ? UNREAD_PARAMETERS[path as ActivityPath] : undefined
  for (const field of unread ?? []) params = without(params, field.split('.')) as Record<string, unknown>
  if (
    path === 'sol_send_transaction' &&
    typeof params.caip2 === 'string' &&
    Object.hasOwn(SOLANA_CAIP2_ALIASES, params.caip2)
  )
    params = { ...params, caip2: SOLANA_CAIP2_ALIASES[params.caip2] }
  return params
}
