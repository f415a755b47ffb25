// Client-side verification of what Latchkey signed, independent of Latchkey: recover the signer
// from the signature with micro-eth-signer (@noble/curves underneath) and compare addresses.
import { eip191Signer, recoverAddressTyped } from 'micro-eth-signer'

export type AnySignature = string | { r: string; s: string; v: string }

const strip0x = (hex: string) => hex.replace(/^0x/i, '')

/** `0x` r‖s‖v (65 bytes) with v as 27/28, from a `{ r, s, v }` or a 64/65-byte hex signature. */
export function toRsvHex(signature: AnySignature): string {
  if (typeof signature === 'string') {
    const hex = strip0x(signature)
    if (hex.length !== 130) throw new Error(`expected a 65-byte signature, got ${hex.length / 2} bytes`)
    const v = Number.parseInt(hex.slice(128), 16)
    return `0x${hex.slice(0, 128)}${(v < 27 ? v + 27 : v).toString(16)}`
  }
  const v = Number.parseInt(strip0x(signature.v), 16)
  return `0x${strip0x(signature.r).padStart(64, '0')}${strip0x(signature.s).padStart(64, '0')}${(v < 27 ? v + 27 : v).toString(16)}`
}

export interface Verification {
  ok: boolean
  recovered: string | null
  error?: string
}

const sameAddress = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()

/** EIP-191 personal message: does the signature recover to `address`? */
export function verifyPersonalMessage(
  message: string,
  signature: AnySignature,
  address: string,
): Verification {
  try {
    const recovered = eip191Signer.recoverAddress(toRsvHex(signature), message)
    return { ok: sameAddress(recovered, address), recovered }
  } catch (error) {
    return { ok: false, recovered: null, error: (error as Error).message }
  }
}

/** EIP-712 typed data (the JSON given to the signer): does the signature recover to `address`? */
export function verifyTypedData(typedData: unknown, signature: AnySignature, address: string): Verification {
  try {
    const recovered = recoverAddressTyped(
      toRsvHex(signature),
      typedData as Parameters<typeof recoverAddressTyped>[1],
    )
    return { ok: sameAddress(recovered, address), recovered }
  } catch (error) {
    return { ok: false, recovered: null, error: (error as Error).message }
  }
}

/** A small EIP-712 document for the demo: a mail, as in the EIP's own example. */
export function exampleTypedData(chainId: number, from: string) {
  return {
    types: {
      EIP712Domain: [
        { name: 'name', type: 'string' },
        { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' },
      ],
      Mail: [
        { name: 'from', type: 'address' },
        { name: 'to', type: 'address' },
        { name: 'contents', type: 'string' },
      ],
    },
    primaryType: 'Mail',
    domain: { name: 'Latchkey Playground', version: '1', chainId },
    message: {
      from,
      to: '0x000000000000000000000000000000000000dEaD',
      contents: 'Hello from the Latchkey playground',
    },
  }
}
