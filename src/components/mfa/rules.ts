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

// Sends and signed transactions, and the type tested first so that other activities never read a
// keyword they lack. Both are judged by all they can take from the account: the value plus the most
// fee, gas limit × max fee per gas (or gas price), which goes to whoever builds the block. A send
// (`eth_send_transaction`) is judged call by call (`eth.tx`: each call of a batch on its own, with
// the fee of the transaction carrying it: the gas and the most fee per gas the service signs it
// with, a replacement's included, whether the caller set them or the node's estimate did; 0 per gas
// when sponsored, docs/mfa.md). The policy language has no arithmetic, so the sum is bounded in steps:
// the fee may take a share of the amount (a thousandth, a hundredth, a tenth, all of it) and the
// value the rest, and the fee per gas is bounded by that share over the gas limit rounded up to
// the next step (21,000, 100,000, 1,000,000, 30,000,000). So it holds some that cost a little less
// than the amount too, never one that may cost more.
const SEND_TYPES = "['ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2', 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION']"
const SIGN_TRANSACTION = "'ACTIVITY_TYPE_SIGN_TRANSACTION_V2'"
const FEE_SHARES = [1000n, 100n, 10n, 1n]
const GAS_STEPS = [21_000n, 100_000n, 1_000_000n, 30_000_000n]
// The fee per gas of each transaction type `sign_transaction` signs; any other is held.
const FEE_FIELDS =
  "[['eip1559', 'max_fee_per_gas'], ['eip7702', 'max_fee_per_gas'], ['legacy', 'gas_price'], ['eip2930', 'gas_price']]"
// A call from the account to itself with calldata, in a send or a signed transaction (of any type,
// EIP-7702 ones too): the kit's delegate (contracts/LatchkeyDelegate.sol), which every batch or
// sponsored send puts on the account, runs `execute` (ERC-7821) for its own account without a
// signature, and that makes any calls with any value, which the call's own value does not show.
// `to` is absent only from a contract creation: reading it is an error, which holds it too.
const SELF_CALL = "eth.tx.to == eth.tx.from && eth.tx.data != '0x'"
// A Solana send, held whatever it holds, as a Solana `sign_transaction` is (it has no `eth`).
const SOL_SEND_TYPES = "['ACTIVITY_TYPE_SOL_SEND_TRANSACTION_V2', 'ACTIVITY_TYPE_SOL_SEND_TRANSACTION']"

/** Value plus gas × fee per gas (`f`) at most `wei`, in steps. */
const costWithin = (wei: bigint): string =>
  FEE_SHARES.map((share) => {
    const fee = wei / share
    const steps = GAS_STEPS.map((gas) => `eth.tx.gas <= ${gas} && f <= ${fee / gas}`).join(' || ')
    return `eth.tx.value <= ${wei - fee} && (${steps})`
  }).join(' || ')

/** A signed transaction that may take more than `wei` (value and fee) from the account. */
const costsAbove = (wei: bigint): string =>
  `!(${FEE_FIELDS}.any(k, k[0] == eth.tx.type && [eth.tx[k[1]]].all(f, ${costWithin(wei)})))`

/** A call of a send that, with the fee of its transaction, may take more than `wei`. */
const sendCostsAbove = (wei: bigint): string => `![eth.tx.max_fee_per_gas].all(f, ${costWithin(wei)})`

// A raw signature can be a transaction's too (of its hash, or of its bytes under the hash its
// chain uses), sent by whoever holds it: raw signing needs the passkey whatever the amount, unless
// what is signed can never move the account's coin. That is keccak256 of EIP-191 bytes (0x19
// first: personal_sign and signMessage, which no transaction starts with) but not of 0x1901 ones
// (an EIP-712 digest, typed data the rule cannot read), and typed data (EIP-712) but a
// `BatchExecution`: the kit's delegate runs the calls of any BatchExecution the account signs,
// whoever relays it. SHA-256 is what Bitcoin (twice), Tron and Cosmos transactions sign, and an
// ed25519 signature of the bytes themselves is a Solana, Sui, Aptos, Stellar or TON transaction's;
// the scope tells neither the account's chain nor a message from a transaction: both are held. An
// EIP-7702 authorization is held too: it hands the whole account to a contract.
const RAW = 'activity.params'
const EIP191 = (payload: string) =>
  `${payload}[0..4] == '0x19' && ${payload}[4..6] != '01' || ${payload}[0..2] == '19' && ${payload}[2..4] != '01'`
const TYPED = `(${RAW}.encoding == 'PAYLOAD_ENCODING_EIP712' && eth.eip_712.primary_type != 'BatchExecution')`
const MESSAGE = `(${RAW}.hashFunction == 'HASH_FUNCTION_KECCAK256' && ${RAW}.encoding == 'PAYLOAD_ENCODING_HEXADECIMAL' && (activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2' && (${EIP191(`${RAW}.payload`)}) || activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS' && ${RAW}.payloads.all(p, ${EIP191('p')})))`
const RAW_TYPES = "['ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS']"

// Solana sends, signed transactions and raw signatures: the same in this rule and the one before.
const REST = (wei: bigint): string =>
  `activity.type in ${SOL_SEND_TYPES} || (activity.type == ${SIGN_TRANSACTION} && (${costsAbove(wei)} || ${SELF_CALL})) || (activity.type in ${RAW_TYPES} && !(${TYPED} || ${MESSAGE}))`

/** The condition of "sends above `wei` need a passkey" (and raw signatures that may be a send). */
export const sendsCondition = (wei: bigint): string =>
  `(activity.type in ${SEND_TYPES} && (eth.tx.value > ${wei} || ${sendCostsAbove(wei)} || ${SELF_CALL})) || ${REST(wei)}`

// The conditions this rule was saved with before, still read as the rule (saving its amount again
// writes the current one): value only, before raw signatures counted; then with raw signatures,
// but every EIP-712 payload let through and a signed transaction's fee not counted; then with
// typed data and fees, but a call to the account itself, a Solana send and SHA-256 and ed25519
// raw signatures let through (c6cedd2e); then with those, but a send's fee not counted (the
// service gave conditions none to read).
const EARLIER_SEND_TYPES = `['ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2', 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION', ${SIGN_TRANSACTION}]`
const EARLIER_EIP191 = (payload: string) => `${payload}[0..4] == '0x19' || ${payload}[0..2] == '19'`
const EARLIER_NOT_A_TRANSACTION = `${RAW}.encoding == 'PAYLOAD_ENCODING_EIP712' || ${RAW}.hashFunction == 'HASH_FUNCTION_SHA256' || (${RAW}.hashFunction == 'HASH_FUNCTION_NOT_APPLICABLE' && ${RAW}.encoding != 'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION') || (${RAW}.hashFunction == 'HASH_FUNCTION_KECCAK256' && ${RAW}.encoding == 'PAYLOAD_ENCODING_HEXADECIMAL' && (activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2' && (${EARLIER_EIP191(`${RAW}.payload`)}) || activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS' && ${RAW}.payloads.all(p, ${EARLIER_EIP191('p')})))`
const earlierConditions = (wei: bigint): string[] => {
  const above = `activity.type in ${EARLIER_SEND_TYPES} && eth.tx.value > ${wei}`
  return [
    `(activity.type in ${SEND_TYPES} && (eth.tx.value > ${wei} || ${SELF_CALL})) || ${REST(wei)}`,
    above,
    `(${above}) || (activity.type in ${RAW_TYPES} && !(${EARLIER_NOT_A_TRANSACTION}))`,
    `(activity.type in ${SEND_TYPES} && eth.tx.value > ${wei}) || (activity.type == ${SIGN_TRANSACTION} && ${costsAbove(wei)}) || (activity.type in ${RAW_TYPES} && !(${TYPED} || (${RAW}.encoding in ['PAYLOAD_ENCODING_HEXADECIMAL', 'PAYLOAD_ENCODING_TEXT_UTF8'] && ${RAW}.hashFunction in ['HASH_FUNCTION_SHA256', 'HASH_FUNCTION_NOT_APPLICABLE']) || ${MESSAGE}))`,
  ]
}

/** The amount (wei) of a sends policy's condition, or undefined when it was edited elsewhere. */
export function thresholdOf(condition: string): bigint | undefined {
  const match = /eth\.tx\.value > ([0-9]{1,78})\)? /.exec(`${condition} `)
  if (!match) return undefined
  const wei = BigInt(match[1] as string)
  return condition === sendsCondition(wei) || earlierConditions(wei).includes(condition) ? wei : undefined
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
