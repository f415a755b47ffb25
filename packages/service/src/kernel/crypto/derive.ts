import type { AccountSpec } from '@latchkey/protocol'
import { CURVES, PATH_FORMATS } from '@latchkey/protocol'
import { ed25519 } from '@noble/curves/ed25519.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { HDKey } from '@scure/bip32'
import { addressFromPublicKey, assertAddressFormatForCurve } from './addresses.ts'
import { CryptoInputError } from './errors.ts'
import { formatPath, parsePath } from './path.ts'
import { HARDENED_OFFSET, slip10Ed25519Derive } from './slip10.ts'

export interface DerivedAccount {
  address: string
  /** secp256k1: 33-byte compressed hex; ed25519: 32-byte hex. */
  publicKey: string
  /** 32-byte private key (secp256k1 scalar or ed25519 seed). */
  privateKey: Uint8Array
}

/** Checks an account spec without deriving anything; throws CryptoInputError naming the field. */
export function validateAccountSpec(spec: AccountSpec): void {
  if (!spec || typeof spec !== 'object')
    throw new CryptoInputError('account spec must be an object', 'accounts')
  if (!(CURVES as readonly string[]).includes(spec.curve))
    throw new CryptoInputError(`unknown curve ${String(spec.curve)}`, 'curve')
  if (!(PATH_FORMATS as readonly string[]).includes(spec.pathFormat))
    throw new CryptoInputError(`unknown pathFormat ${String(spec.pathFormat)}`, 'pathFormat')
  assertAddressFormatForCurve(spec.addressFormat, spec.curve)
  const segments = parsePath(spec.path)
  if (spec.curve === 'CURVE_ED25519' && segments.some((s) => !s.hardened))
    throw new CryptoInputError(
      `ed25519 (SLIP-10) paths must be hardened at every level, got "${spec.path}"`,
      'path',
    )
}

/** The root node is computed once per seed per call; callers deriving many accounts reuse the seed. */
export function deriveAccount(seed: Uint8Array, spec: AccountSpec): DerivedAccount {
  if (!(seed instanceof Uint8Array) || seed.length < 16 || seed.length > 64)
    throw new CryptoInputError('seed must be 16 to 64 bytes', 'seed')
  validateAccountSpec(spec)
  const segments = parsePath(spec.path)
  if (spec.curve === 'CURVE_SECP256K1') {
    const node = HDKey.fromMasterSeed(seed).derive(formatPath(segments))
    if (!node.privateKey || !node.publicKey) throw new Error('BIP-32 derivation produced no key')
    return {
      address: addressFromPublicKey(spec.addressFormat, node.publicKey),
      publicKey: bytesToHex(node.publicKey),
      privateKey: node.privateKey,
    }
  }
  const node = slip10Ed25519Derive(
    seed,
    segments.map((s) => s.index + HARDENED_OFFSET),
  )
  const publicKey = ed25519.getPublicKey(node.privateKey)
  return {
    address: addressFromPublicKey(spec.addressFormat, publicKey),
    publicKey: bytesToHex(publicKey),
    privateKey: node.privateKey,
  }
}
