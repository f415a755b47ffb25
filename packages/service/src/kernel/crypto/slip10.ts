import { hmac } from '@noble/hashes/hmac.js'
import { sha512 } from '@noble/hashes/sha2.js'
import { utf8ToBytes } from '@noble/hashes/utils.js'
import { CryptoInputError } from './errors.ts'

/** BIP-32 hardened offset (2^31). */
export const HARDENED_OFFSET = 0x80000000

/** A SLIP-10 ed25519 node: the 32-byte private key and its chain code. */
export interface Slip10Node {
  privateKey: Uint8Array
  chainCode: Uint8Array
}

const ED25519_SEED_KEY = utf8ToBytes('ed25519 seed')

/** SLIP-10 master node for ed25519: I = HMAC-SHA512("ed25519 seed", seed). */
export function slip10Ed25519Master(seed: Uint8Array): Slip10Node {
  const I = hmac(sha512, ED25519_SEED_KEY, seed)
  return { privateKey: I.slice(0, 32), chainCode: I.slice(32) }
}

/**
 * SLIP-10 ed25519 child: I = HMAC-SHA512(chainCode, 0x00 ‖ key ‖ ser32(index)).
 * ed25519 has no public derivation, so only hardened indices exist.
 */
export function slip10Ed25519Child(parent: Slip10Node, index: number): Slip10Node {
  if (!Number.isInteger(index) || index < HARDENED_OFFSET || index > 0xffffffff)
    throw new CryptoInputError('ed25519 (SLIP-10) derivation supports hardened path segments only', 'path')
  const data = new Uint8Array(37)
  data.set(parent.privateKey, 1)
  new DataView(data.buffer).setUint32(33, index, false)
  const I = hmac(sha512, parent.chainCode, data)
  return { privateKey: I.slice(0, 32), chainCode: I.slice(32) }
}

/** Derives a SLIP-10 ed25519 node for a list of (already hardened) indices. */
export function slip10Ed25519Derive(seed: Uint8Array, indices: readonly number[]): Slip10Node {
  let node = slip10Ed25519Master(seed)
  for (const index of indices) node = slip10Ed25519Child(node, index)
  return node
}
