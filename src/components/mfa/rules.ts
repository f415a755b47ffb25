import type { MfaPolicy, RequiredAuthenticationMethod } from '@latchkey/protocol'

// The two common MFA policies <SecuritySettings/> manages in words, written in the policy language
// (docs/policies.md) and recognised again by their names. Any other policy on the user is listed
// by its name and left alone.

/** "Exporting a wallet or key needs a second factor". */
export const EXPORTS_POLICY = 'latchkey: exports need a second factor'
/** "Sends above X ETH need a passkey". */
export const SENDS_POLICY = 'latchkey: sends above an amount need a passkey'

export const EXPORTS_CONDITION = "activity.action == 'EXPORT'"
/** An authenticator app code, a recovery code in its place, or a passkey. */
export const EXPORTS_METHODS: RequiredAuthenticationMethod[] = [
  { any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }, { type: 'AUTHENTICATION_TYPE_PASSKEY' }] },
]
export const SENDS_METHODS: RequiredAuthenticationMethod[] = [
  { any: [{ type: 'AUTHENTICATION_TYPE_PASSKEY' }] },
]

// Sends and signed transactions: each call of a batch is judged on its own (`eth.tx`), and the
// type is tested first so that other activities never read a keyword they lack.
const SEND_TYPES =
  "['ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2', 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION', 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2']"

/** The condition of "sends above `wei` need a passkey". */
export const sendsCondition = (wei: bigint): string =>
  `activity.type in ${SEND_TYPES} && eth.tx.value > ${wei.toString()}`

/** The amount (wei) of a sends policy's condition, or undefined when it was edited elsewhere. */
export function thresholdOf(condition: string): bigint | undefined {
  const match = / && eth\.tx\.value > ([0-9]{1,78})$/.exec(condition)
  return match && condition === sendsCondition(BigInt(match[1] as string))
    ? BigInt(match[1] as string)
    : undefined
}

/** The policies <SecuritySettings/> shows in words, and the others. */
export function sortPolicies(policies: readonly MfaPolicy[]) {
  return {
    exports: policies.find((policy) => policy.mfaPolicyName === EXPORTS_POLICY),
    sends: policies.find((policy) => policy.mfaPolicyName === SENDS_POLICY),
    others: policies.filter(
      (policy) => policy.mfaPolicyName !== EXPORTS_POLICY && policy.mfaPolicyName !== SENDS_POLICY,
    ),
  }
}

/** The text file of recovery codes the user downloads. */
export const recoveryCodesFile = (header: string, codes: readonly string[]): string =>
  `${header}\n\n${codes.join('\n')}\n`
