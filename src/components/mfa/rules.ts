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

// A raw signature can be a transaction's too (of its hash, or keccak256 of its bytes), sent by
// whoever holds it: raw signing needs the passkey whatever the amount, unless what is signed can
// never be an Ethereum transaction. That is typed data (EIP-712), a hash other than keccak256 (an
// ed25519 or SHA-256 signature), or keccak256 of EIP-191 bytes (0x19 first: personal_sign and
// signMessage, which no transaction starts with). An EIP-7702 authorization is not among them:
// it hands the whole account to a contract.
const RAW = 'activity.params'
const EIP191 = (payload: string) => `${payload}[0..4] == '0x19' || ${payload}[0..2] == '19'`
const NOT_A_TRANSACTION = `${RAW}.encoding == 'PAYLOAD_ENCODING_EIP712' || ${RAW}.hashFunction == 'HASH_FUNCTION_SHA256' || (${RAW}.hashFunction == 'HASH_FUNCTION_NOT_APPLICABLE' && ${RAW}.encoding != 'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION') || (${RAW}.hashFunction == 'HASH_FUNCTION_KECCAK256' && ${RAW}.encoding == 'PAYLOAD_ENCODING_HEXADECIMAL' && (activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2' && (${EIP191(`${RAW}.payload`)}) || activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS' && ${RAW}.payloads.all(p, ${EIP191('p')})))`
const RAW_TYPES = "['ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS']"

/** Sends above `wei`: the whole condition this rule was saved with before raw signatures counted. */
const sendsAbove = (wei: bigint): string =>
  `activity.type in ${SEND_TYPES} && eth.tx.value > ${wei.toString()}`

/** The condition of "sends above `wei` need a passkey" (and raw signatures that may be a send). */
export const sendsCondition = (wei: bigint): string =>
  `(${sendsAbove(wei)}) || (activity.type in ${RAW_TYPES} && !(${NOT_A_TRANSACTION}))`

/** The amount (wei) of a sends policy's condition, or undefined when it was edited elsewhere. */
export function thresholdOf(condition: string): bigint | undefined {
  const match = /eth\.tx\.value > ([0-9]{1,78})\)? /.exec(`${condition} `)
  if (!match) return undefined
  const wei = BigInt(match[1] as string)
  return condition === sendsCondition(wei) || condition === sendsAbove(wei) ? wei : undefined
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
