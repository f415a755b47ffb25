// The service's secp256k1 signatures (issue 42). On Node: libsecp256k1, Bitcoin Core's library,
// compiled to WebAssembly (tiny-secp256k1). It signs about four times as fast as noble's
// JavaScript (9,600 against 2,430 a second in one thread on the bench machine), in constant time,
// and zeroes its copies of the key and digest after each call. Where the service runs in a page
// (Storybook's live stories), noble signs: tiny-secp256k1's browser build needs a bundler's
// WebAssembly plugin. The signatures are the same, byte for byte: RFC 6979 deterministic nonces,
// low s (secp256k1Sign.test.ts compares them).
import { secp256k1 } from '@noble/curves/secp256k1.js'

type Libsecp256k1 = Pick<typeof import('tiny-secp256k1'), 'signRecoverable'>

/**
 * tiny-secp256k1, loaded through Node's `require` (its CommonJS build reads its .wasm beside it),
 * without a static import a page's bundler would follow; undefined outside Node.
 */
function loadLibsecp256k1(): Libsecp256k1 | undefined {
  const nodeModule = globalThis.process?.getBuiltinModule?.('node:module') as
    | typeof import('node:module')
    | undefined
  return nodeModule?.createRequire(import.meta.url)('tiny-secp256k1') as Libsecp256k1 | undefined
}

const libsecp256k1 = loadLibsecp256k1()

/** Which implementation signs in this process (the bench prints it). */
export const secp256k1Signer: 'libsecp256k1' | 'noble' = libsecp256k1 ? 'libsecp256k1' : 'noble'

/**
 * Signs a 32-byte digest: the recovery byte ‖ r ‖ s (65 bytes), the layout of noble's
 * `secp256k1.sign(digest, key, { prehash: false, lowS: true, format: 'recovered' })`.
 */
export function signDigest(digest: Uint8Array, privateKey: Uint8Array): Uint8Array {
  if (!libsecp256k1)
    return secp256k1.sign(digest, privateKey, { prehash: false, lowS: true, format: 'recovered' })
  const { signature, recoveryId } = libsecp256k1.signRecoverable(digest, privateKey)
  const recovered = new Uint8Array(65)
  recovered[0] = recoveryId
  recovered.set(signature, 1)
  return recovered
}
