import type { PolicyStruct, PolicyValue } from './evaluateExpression.ts'

const EVM_ADDRESS = /^0[xX][0-9a-fA-F]{40}$/

/**
 * The form in which policies compare an address: an EVM address (0x and 40 hex digits, checksummed
 * or not) in lowercase, since its case carries only the EIP-55 checksum; any other string as it is,
 * since base58 (Solana, Bitcoin legacy) and bech32 addresses are case-sensitive or have one valid
 * case, and are compared exactly.
 */
export function canonicalAddress(text: string): string {
  return EVM_ADDRESS.test(text) ? text.toLowerCase() : text
}

/** `value` with every string in it, however deep, in its `canonicalAddress` form. */
export function canonicalPolicyValue(value: PolicyValue): PolicyValue {
  if (typeof value === 'string') return canonicalAddress(value)
  if (Array.isArray(value)) return value.map(canonicalPolicyValue)
  if (typeof value === 'object') {
    const struct: Record<string, PolicyValue> = {}
    for (const [key, item] of Object.entries(value as PolicyStruct)) struct[key] = canonicalPolicyValue(item)
    return struct
  }
  return value
}
