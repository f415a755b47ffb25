// EIP-712 payloads for the policy tests (`eth.eip_712`): an ERC-2612 Permit, its submission through
// `sign_raw_payload` or `sign_raw_payloads`, and whether a signature the service gave is the one
// for the canonical data (what a DENY was meant to refuse).
import { recoverAddressTyped, serializeSignature } from 'micro-eth-signer'
import type { delegated } from './delegated.ts'

type Delegated = Awaited<ReturnType<typeof delegated>>

export const SPENDER = '0x1111111111111111111111111111111111111111'
export const TOKEN = '0x2222222222222222222222222222222222222222'

/** A Permit of `value` on `domain` (chain 1, TOKEN), with `extraTypes` beside its own. */
export const permit = (
  value: unknown,
  {
    domain = {},
    extraTypes = {},
  }: { domain?: Record<string, unknown>; extraTypes?: Record<string, unknown> } = {},
) => ({
  types: {
    Permit: [
      { name: 'owner', type: 'address' },
      { name: 'spender', type: 'address' },
      { name: 'value', type: 'uint256' },
      { name: 'nonce', type: 'uint256' },
      { name: 'deadline', type: 'uint256' },
    ],
    ...extraTypes,
  },
  primaryType: 'Permit',
  domain: { name: 'Token', version: '1', chainId: 1, verifyingContract: TOKEN, ...domain },
  message: { owner: SPENDER, spender: SPENDER, value, nonce: '0', deadline: '99999999999' },
})

/** `typed` (EIP-712) signed by `signWith` as the delegated back end, one payload of `path`. */
export const signTyped = (
  t: Delegated,
  signWith: string,
  typed: unknown,
  path: 'sign_raw_payload' | 'sign_raw_payloads' = 'sign_raw_payload',
) =>
  t.h.submit(
    path,
    {
      signWith,
      ...(path === 'sign_raw_payload'
        ? { payload: JSON.stringify(typed) }
        : { payloads: [JSON.stringify(typed)] }),
      encoding: 'PAYLOAD_ENCODING_EIP712',
      hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
    },
    t.asBackend,
  )

/** Whether `answer` signed (200) with a signature `signWith` made over `canonical`. */
export function signedFor(
  answer: Awaited<ReturnType<typeof signTyped>>,
  canonical: unknown,
  signWith: string,
): boolean {
  if (answer.status !== 200) return false
  const result = answer.body.activity.result
  const { r, s, v } = result.signRawPayloadResult ?? result.signRawPayloadsResult.signatures[0]
  const signature = serializeSignature({ r: BigInt(`0x${r}`), s: BigInt(`0x${s}`), yParity: Number(v) })
  return recoverAddressTyped(signature, canonical as never).toLowerCase() === signWith.toLowerCase()
}
