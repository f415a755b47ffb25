// A key's addresses in every format of its curve, as the service writes them: what the policies
// look the key's holders up by (policySignersOf.ts) and what the limits compare a limit's address
// with (limits/signerKey.ts).
import { ADDRESS_FORMATS, type Curve } from '@latchkey/protocol'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { addressFromPublicKey, curvesOfAddressFormat } from '../kernel/crypto/addresses.ts'

/** Kept by `curve|publicKey` (hex, lower case), for the last 1,000 keys. */
const addressesByKey = new Map<string, readonly string[]>()
const KEPT_KEYS = 1_000

/**
 * The key's addresses in every format of its curve, each once, spelt as `addressFromPublicKey`
 * writes them (a wallet account's `address`; an Ethereum address checksummed): about 30 formats
 * for a secp256k1 key (some write the same string), several milliseconds the first time. A format
 * that cannot encode the key is left out; throws for bytes that are not a point of `curve`.
 */
export function keyAddresses(key: { curve: Curve; bytes: Uint8Array }): readonly string[] {
  const id = `${key.curve}|${bytesToHex(key.bytes)}`
  const kept = addressesByKey.get(id)
  if (kept) return kept
  // The secp256k1 point, decoded once for every format (a square root each time otherwise).
  const point = key.curve === 'CURVE_SECP256K1' ? secp256k1.Point.fromBytes(key.bytes) : undefined
  const written = [
    ...new Set(
      ADDRESS_FORMATS.filter((format) => curvesOfAddressFormat(format).includes(key.curve)).flatMap(
        (format) => {
          try {
            return [addressFromPublicKey(format, key.bytes, point)]
          } catch {
            return []
          }
        },
      ),
    ),
  ]
  if (addressesByKey.size >= KEPT_KEYS) addressesByKey.delete(addressesByKey.keys().next().value!)
  addressesByKey.set(id, written)
  return written
}
