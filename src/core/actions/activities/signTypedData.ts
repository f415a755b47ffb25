import type { Latchkey } from '../../types.ts'
import type { ActionOptions } from '../options.ts'
import { signRawPayloads } from './signRawPayloads.ts'

/** EIP-712 typed data, as `eth_signTypedData_v4` takes it. */
export interface TypedData {
  types: Record<string, { name: string; type: string }[]>
  primaryType: string
  domain: Record<string, unknown>
  message: Record<string, unknown>
}

export type SignTypedDataParameters = {
  /** Ethereum address of the wallet account that signs. */
  signWith: string
  typedData: TypedData
} & ActionOptions
export type SignTypedDataReturnType = {
  r: string
  s: string
  v: string /** `0x` r‖s‖(27+v) */
  signature: string
}

/** JSON with bigints written as decimal strings (typed data often carries uint256 values). */
const stringify = (value: unknown) =>
  JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? v.toString() : v))

/** Signs EIP-712 typed data with an Ethereum account (`sign_raw_payloads`, `PAYLOAD_ENCODING_EIP712`). */
export async function signTypedData(
  client: Latchkey,
  parameters: SignTypedDataParameters,
): Promise<SignTypedDataReturnType> {
  const { signWith, typedData, ...options } = parameters
  const { signatures } = await signRawPayloads(client, {
    signWith,
    payloads: [stringify(typedData)],
    encoding: 'PAYLOAD_ENCODING_EIP712',
    hashFunction: 'HASH_FUNCTION_KECCAK256',
    ...options,
  })
  const { r, s, v } = signatures[0] as SignTypedDataReturnType
  return { r, s, v, signature: `0x${r}${s}${(27 + Number.parseInt(v, 16)).toString(16)}` }
}
