import type { Curve, HashFunction, PayloadEncoding } from '@latchkey/protocol'
import { HASH_FUNCTIONS, PAYLOAD_ENCODINGS } from '@latchkey/protocol'
import { ed25519 } from '@noble/curves/ed25519.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import {
  authorization,
  parseSignature,
  recoverAddressTyped,
  serializeSignature,
  signTyped,
} from 'micro-eth-signer'
import { addressFromPublicKey } from './addresses.ts'
import { CryptoInputError } from './errors.ts'
import { signDigest } from './secp256k1Sign.ts'

/** `{ r, s, v }` as returned by sign_raw_payloads: 32-byte hex r and s, v = '00' | '01'. */
export interface RawSignature {
  r: string
  s: string
  v: string
}

export interface SignRawPayloadInput {
  curve: Curve
  privateKey: Uint8Array
  payload: string
  encoding: PayloadEncoding
  hashFunction: HashFunction
}

export interface VerifyRawSignatureInput {
  curve: Curve
  /** secp256k1: compressed (33) or uncompressed (65) key; ed25519: 32-byte key. */
  publicKey: Uint8Array
  payload: string
  encoding: PayloadEncoding
  hashFunction: HashFunction
  signature: RawSignature
}

const HEX = /^(0x)?([0-9a-fA-F]{2})*$/

function hexPayload(payload: string): Uint8Array {
  if (typeof payload !== 'string' || !HEX.test(payload))
    throw new CryptoInputError(
      'payload is not hexadecimal (even number of hex digits, optional 0x)',
      'payloads',
    )
  return hexToBytes(payload.replace(/^0x/, '').toLowerCase())
}

/** Payload bytes for the byte-oriented encodings. */
function payloadBytes(payload: string, encoding: PayloadEncoding): Uint8Array {
  if (typeof payload !== 'string') throw new CryptoInputError('payload must be a string', 'payloads')
  switch (encoding) {
    case 'PAYLOAD_ENCODING_HEXADECIMAL':
      return hexPayload(payload)
    case 'PAYLOAD_ENCODING_TEXT_UTF8':
      return utf8ToBytes(payload)
    default:
      throw new CryptoInputError(`${encoding} has no byte form`, 'encoding')
  }
}

function checkEnums(encoding: PayloadEncoding, hashFunction: HashFunction): void {
  if (!(PAYLOAD_ENCODINGS as readonly string[]).includes(encoding))
    throw new CryptoInputError(`unknown encoding ${String(encoding)}`, 'encoding')
  if (!(HASH_FUNCTIONS as readonly string[]).includes(hashFunction))
    throw new CryptoInputError(`unknown hashFunction ${String(hashFunction)}`, 'hashFunction')
}

function parseJson(payload: string, what: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(payload)
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>
  } catch {}
  throw new CryptoInputError(`${what} payload must be a JSON object`, 'payloads')
}

type TypedDataArg = Parameters<typeof signTyped>[0]

function typedData(payload: string): TypedDataArg {
  const typed = parseJson(payload, 'EIP-712')
  for (const key of ['types', 'primaryType', 'domain', 'message'])
    if (!(key in typed)) throw new CryptoInputError(`EIP-712 payload lacks "${key}"`, 'payloads')
  if (!typed.types || typeof typed.types !== 'object' || Array.isArray(typed.types))
    throw new CryptoInputError('EIP-712 "types" must be an object of struct types', 'payloads')
  const types = typed.types as StructTypes
  // A struct named like an atomic type (`uint256`, `bytes`, `address`…) or an array: the signer
  // encodes a field of that name as the atomic type while a reader of the types (the check below,
  // viem) takes it for the struct, so its values went unchecked (" 1000000" past a DENY on 100).
  for (const name of Object.keys(types))
    if (ATOMIC_TYPE.test(name) || name.includes('['))
      throw new CryptoInputError(
        `EIP-712 types.${name}: a struct cannot be named like an atomic type`,
        'payloads',
      )
  spelledPlainly(types, String(typed.primaryType), typed.message, { path: 'message', depth: 0 })
  // Without `types.EIP712Domain` the signer types the domain itself (micro-eth-signer's
  // getDomainType): its integer and bytes fields are checked as it reads them.
  const domainTypes = types.EIP712Domain ? types : { EIP712Domain: DERIVED_DOMAIN_FIELDS }
  spelledPlainly(domainTypes, 'EIP712Domain', typed.domain, { path: 'domain', depth: 0 })
  return typed as unknown as TypedDataArg
}

/** The domain's fields whose spelling matters, as the signer types a domain no type declares. */
const DERIVED_DOMAIN_FIELDS = [
  { name: 'chainId', type: 'uint256' },
  { name: 'salt', type: 'bytes32' },
]

/** EIP-712's atomic types: what a struct may not be named. */
const ATOMIC_TYPE = /^(bool|address|string|bytes\d*|u?int\d*)$/

/**
 * How deep typed data may nest, arrays and structs alike: micro-eth-signer's own bound, and how deep
 * the policies read it (`eth.eip_712`), so a DENY sees every field signed.
 */
export const MAX_TYPED_DEPTH = 64

type StructTypes = Record<string, { name: string; type: string }[] | undefined>

/** An integer as a string the policies read (`eth.eip_712`) and the signer takes: decimal or 0x-hex. */
export const PLAIN_INTEGER = /^(-?\d+|0x[0-9a-fA-F]+)$/

/**
 * Integers of typed data only in decimal or 0x-hex, and bytes only as 0x-hex, as the policies read
 * them (`eth.eip_712`): the signer's `BigInt` also takes " 1000", "+1000", "0o1750" or "0b…", and
 * its hex decoder bytes without their `0x`, which a policy would not see, so a DENY on an amount, a
 * chain or a selector would let the same signature through. Deeper than the signer's bound: a 400.
 */
function spelledPlainly(
  types: StructTypes,
  type: string,
  value: unknown,
  at: { path: string; depth: number },
): void {
  const { path, depth } = at
  if (depth > MAX_TYPED_DEPTH)
    throw new CryptoInputError(
      `EIP-712 ${path.slice(0, 80)}…: nested deeper than ${MAX_TYPED_DEPTH}`,
      'payloads',
    )
  const array = /^(.*)\[(\d*)\]$/.exec(type)
  if (array) {
    if (Array.isArray(value))
      for (const [i, item] of value.entries())
        spelledPlainly(types, array[1]!, item, { path: `${path}[${i}]`, depth: depth + 1 })
    return
  }
  if (/^bytes\d*$/.test(type)) {
    if (typeof value === 'string' && !/^0x([0-9a-fA-F]{2})*$/.test(value))
      throw new CryptoInputError(
        `EIP-712 ${path} is ${type}: write it as 0x-prefixed hex, got ${JSON.stringify(value.slice(0, 40))}`,
        'payloads',
      )
    return
  }
  // Only the caller's own types, each a list of fields: a type named after a prototype member
  // (`toString`) or a list that is not one is the signer's to refuse (a 400), not a TypeError here.
  const fields = Object.hasOwn(types, type) ? types[type] : undefined
  if (fields !== undefined) {
    if (!Array.isArray(fields) || !fields.every((field) => field && typeof field === 'object'))
      throw new CryptoInputError(`EIP-712 types.${type} must be a list of { name, type } fields`, 'payloads')
    if (value && typeof value === 'object')
      for (const field of fields)
        spelledPlainly(types, field.type, (value as Record<string, unknown>)[field.name], {
          path: `${path}.${field.name}`,
          depth: depth + 1,
        })
    return
  }
  if (/^u?int\d*$/.test(type) && typeof value === 'string' && !PLAIN_INTEGER.test(value))
    throw new CryptoInputError(
      `EIP-712 ${path} is a ${type}: write it in decimal or 0x-hex, got ${JSON.stringify(value.slice(0, 40))}`,
      'payloads',
    )
}

function bigintField(value: unknown, name: string): bigint {
  try {
    if (typeof value === 'bigint') return value
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value)
    if (typeof value === 'string' && /^(0x[0-9a-fA-F]+|\d+)$/.test(value)) return BigInt(value)
  } catch {}
  throw new CryptoInputError(`EIP-7702 authorization "${name}" must be a non-negative integer`, 'payloads')
}

/** keccak256(0x05 ‖ rlp([chainId, address, nonce])) of an EIP-7702 authorization JSON payload. */
export function eip7702AuthorizationDigest(payload: string): Uint8Array {
  const json = parseJson(payload, 'EIP-7702 authorization')
  const address = json.address
  if (typeof address !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(address))
    throw new CryptoInputError(
      'EIP-7702 authorization "address" must be a 0x-prefixed 20-byte hex address',
      'payloads',
    )
  const request = {
    chainId: bigintField(json.chainId, 'chainId'),
    address: address.toLowerCase(),
    nonce: bigintField(json.nonce, 'nonce'),
  }
  try {
    return authorization.getHash(request)
  } catch (error) {
    throw new CryptoInputError(`invalid EIP-7702 authorization: ${(error as Error).message}`, 'payloads')
  }
}

/**
 * The 32-byte digest a secp256k1 signature covers, for every encoding except EIP-712 (whose digest
 * micro-eth-signer computes inside signTyped/recoverAddressTyped).
 */
export function secp256k1Digest(
  payload: string,
  encoding: PayloadEncoding,
  hashFunction: HashFunction,
): Uint8Array {
  checkEnums(encoding, hashFunction)
  if (encoding === 'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION') {
    requireEthereumHash(hashFunction)
    return eip7702AuthorizationDigest(payload)
  }
  if (encoding === 'PAYLOAD_ENCODING_EIP712')
    throw new CryptoInputError('EIP-712 digests are computed by the typed-data signer', 'encoding')
  const bytes = payloadBytes(payload, encoding)
  switch (hashFunction) {
    case 'HASH_FUNCTION_NO_OP':
      if (bytes.length !== 32)
        throw new CryptoInputError(
          `HASH_FUNCTION_NO_OP needs a 32-byte payload (a digest), got ${bytes.length} bytes`,
          'payloads',
        )
      return bytes
    case 'HASH_FUNCTION_SHA256':
      return sha256(bytes)
    case 'HASH_FUNCTION_KECCAK256':
      return keccak_256(bytes)
    case 'HASH_FUNCTION_NOT_APPLICABLE':
      throw new CryptoInputError(
        'HASH_FUNCTION_NOT_APPLICABLE is for ed25519, EIP-712 and EIP-7702 payloads; choose a hash for secp256k1',
        'hashFunction',
      )
  }
}

function requireEthereumHash(hashFunction: HashFunction): void {
  if (hashFunction !== 'HASH_FUNCTION_KECCAK256' && hashFunction !== 'HASH_FUNCTION_NOT_APPLICABLE')
    throw new CryptoInputError(
      'EIP-712 and EIP-7702 payloads need HASH_FUNCTION_KECCAK256 or HASH_FUNCTION_NOT_APPLICABLE',
      'hashFunction',
    )
}

function ed25519Message(payload: string, encoding: PayloadEncoding, hashFunction: HashFunction): Uint8Array {
  checkEnums(encoding, hashFunction)
  if (hashFunction !== 'HASH_FUNCTION_NOT_APPLICABLE')
    throw new CryptoInputError(
      'ed25519 signs the payload itself: use HASH_FUNCTION_NOT_APPLICABLE',
      'hashFunction',
    )
  if (encoding !== 'PAYLOAD_ENCODING_HEXADECIMAL' && encoding !== 'PAYLOAD_ENCODING_TEXT_UTF8')
    throw new CryptoInputError(`${encoding} payloads need a secp256k1 key`, 'encoding')
  return payloadBytes(payload, encoding)
}

const hex32 = (n: bigint) => n.toString(16).padStart(64, '0')

/**
 * Signs one sign_raw_payloads payload. secp256k1: deterministic (RFC 6979) low-s ECDSA over the
 * digest, v = recovery bit ('00'/'01'). ed25519: r = first, s = second half of the signature, v = '00'.
 */
export function signRawPayload(input: SignRawPayloadInput): RawSignature {
  const { curve, privateKey, payload, encoding, hashFunction } = input
  if (!(privateKey instanceof Uint8Array) || privateKey.length !== 32)
    throw new CryptoInputError('privateKey must be 32 bytes', 'privateKey')
  if (curve === 'CURVE_ED25519') {
    const signature = ed25519.sign(ed25519Message(payload, encoding, hashFunction), privateKey)
    return { r: bytesToHex(signature.slice(0, 32)), s: bytesToHex(signature.slice(32)), v: '00' }
  }
  if (curve !== 'CURVE_SECP256K1') throw new CryptoInputError(`unknown curve ${String(curve)}`, 'curve')
  checkEnums(encoding, hashFunction)
  if (encoding === 'PAYLOAD_ENCODING_EIP712') {
    requireEthereumHash(hashFunction)
    const typed = typedData(payload)
    let serialized: string
    try {
      serialized = signTyped(typed, privateKey, false)
    } catch (error) {
      throw new CryptoInputError(`invalid EIP-712 typed data: ${(error as Error).message}`, 'payloads')
    }
    const { r, s, yParity } = parseSignature(serialized)
    return { r: hex32(r), s: hex32(s), v: yParity === 1 ? '01' : '00' }
  }
  const digest = secp256k1Digest(payload, encoding, hashFunction)
  // libsecp256k1 (secp256k1Sign.ts); 'recovered' layout: recovery byte ‖ r ‖ s
  const recovered = signDigest(digest, privateKey)
  return {
    r: bytesToHex(recovered.slice(1, 33)),
    s: bytesToHex(recovered.slice(33, 65)),
    v: bytesToHex(recovered.slice(0, 1)),
  }
}

function signatureBytes(signature: RawSignature): Uint8Array | undefined {
  const { r, s } = signature
  if (!/^[0-9a-fA-F]{64}$/.test(r ?? '') || !/^[0-9a-fA-F]{64}$/.test(s ?? '')) return undefined
  return hexToBytes((r + s).toLowerCase())
}

/**
 * Checks a `{ r, s, v }` from signRawPayload against a public key. For secp256k1 it also checks
 * that v recovers that key. Returns false (never throws) on a wrong signature; throws
 * CryptoInputError only on malformed payload/encoding/hash input.
 */
export function verifyRawSignature(input: VerifyRawSignatureInput): boolean {
  const { curve, publicKey, payload, encoding, hashFunction, signature } = input
  const sig = signatureBytes(signature)
  if (!sig) return false
  if (curve === 'CURVE_ED25519') {
    const message = ed25519Message(payload, encoding, hashFunction)
    try {
      return ed25519.verify(sig, message, publicKey)
    } catch {
      return false
    }
  }
  const v = signature.v === '00' ? 0 : signature.v === '01' ? 1 : -1
  if (v < 0) return false
  if (encoding === 'PAYLOAD_ENCODING_EIP712') {
    requireEthereumHash(hashFunction)
    const typed = typedData(payload)
    try {
      const serialized = serializeSignature({
        r: BigInt('0x' + signature.r),
        s: BigInt('0x' + signature.s),
        yParity: v,
      })
      const compressed = secp256k1.Point.fromBytes(publicKey).toBytes(true)
      return (
        recoverAddressTyped(serialized, typed) === addressFromPublicKey('ADDRESS_FORMAT_ETHEREUM', compressed)
      )
    } catch {
      return false
    }
  }
  const digest = secp256k1Digest(payload, encoding, hashFunction)
  try {
    if (!secp256k1.verify(sig, digest, publicKey, { prehash: false, lowS: true })) return false
    const recovered = secp256k1.recoverPublicKey(concatBytes(new Uint8Array([v]), sig), digest, {
      prehash: false,
    })
    return bytesToHex(recovered) === bytesToHex(secp256k1.Point.fromBytes(publicKey).toBytes(true))
  } catch {
    return false
  }
}
