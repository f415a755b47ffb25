import type { AddressFormat, BitcoinAddressFormat, Curve } from '@latchkey/protocol'
import { ADDRESS_FORMATS, BITCOIN_ADDRESS_FORMATS } from '@latchkey/protocol'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { blake2b } from '@noble/hashes/blake2.js'
import { ripemd160 } from '@noble/hashes/legacy.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { keccak_256, sha3_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, concatBytes } from '@noble/hashes/utils.js'
import { base32nopad, base58, base58xrp, bech32, bech32m, createBase58check } from '@scure/base'
import * as btc from '@scure/btc-signer'
import { crc16 } from '@ton/core'
import { addr } from 'micro-eth-signer'
import { CryptoInputError } from './errors.ts'
import { tonWalletAddress } from './ton.ts'

const base58check = createBase58check(sha256)

/** Which curves each address format can be derived on. */
export function curvesOfAddressFormat(format: AddressFormat): readonly Curve[] {
  switch (format) {
    case 'ADDRESS_FORMAT_COMPRESSED':
    case 'ADDRESS_FORMAT_UNCOMPRESSED':
      return ['CURVE_SECP256K1', 'CURVE_ED25519']
    case 'ADDRESS_FORMAT_SOLANA':
    case 'ADDRESS_FORMAT_SUI':
    case 'ADDRESS_FORMAT_APTOS':
    case 'ADDRESS_FORMAT_XLM':
    case 'ADDRESS_FORMAT_TON_V3R2':
    case 'ADDRESS_FORMAT_TON_V4R2':
    case 'ADDRESS_FORMAT_TON_V5R1':
      return ['CURVE_ED25519']
    default:
      return ['CURVE_SECP256K1']
  }
}

/** Throws CryptoInputError (field 'addressFormat') unless `format` is known and derivable on `curve`. */
export function assertAddressFormatForCurve(format: AddressFormat, curve: Curve): void {
  if (!(ADDRESS_FORMATS as readonly string[]).includes(format))
    throw new CryptoInputError(`unknown addressFormat ${String(format)}`, 'addressFormat')
  if (!curvesOfAddressFormat(format).includes(curve))
    throw new CryptoInputError(`${format} cannot be derived on ${curve}`, 'addressFormat')
}

const hash160 = (bytes: Uint8Array) => ripemd160(sha256(bytes))

/** Regtest is not in @scure/btc-signer; these are Bitcoin Core's chainparams. */
const REGTEST_NETWORK: typeof btc.NETWORK = { ...btc.TEST_NETWORK, bech32: 'bcrt' }

function bitcoinNetwork(net: string): typeof btc.NETWORK {
  switch (net) {
    case 'MAINNET':
      return btc.NETWORK
    case 'TESTNET':
    case 'SIGNET':
      return btc.TEST_NETWORK
    case 'REGTEST':
      return REGTEST_NETWORK
    default:
      throw new CryptoInputError(`unknown bitcoin network ${net}`, 'addressFormat')
  }
}

function bitcoinAddress(format: BitcoinAddressFormat, publicKey: Uint8Array): string {
  const [, , , net = '', kind] = format.split('_')
  const network = bitcoinNetwork(net)
  let address: string | undefined
  switch (kind) {
    case 'P2PKH':
      address = btc.p2pkh(publicKey, network).address
      break
    case 'P2SH': // BIP-49: P2SH-wrapped P2WPKH
      address = btc.p2sh(btc.p2wpkh(publicKey, network), network).address
      break
    case 'P2WPKH':
      address = btc.p2wpkh(publicKey, network).address
      break
    case 'P2WSH': // single-key script `<pubkey> OP_CHECKSIG`
      address = btc.p2wsh(btc.p2pk(publicKey, network), network).address
      break
    case 'P2TR': // BIP-86: key-path only, x-only internal key tweaked with an empty script tree
      address = btc.p2tr(publicKey.slice(1), undefined, network).address
      break
  }
  if (!address) throw new CryptoInputError(`unknown bitcoin address kind in ${format}`, 'addressFormat')
  return address
}

/** Stellar StrKey account id: base32(version 6<<3 ‖ key ‖ CRC16-XModem little-endian). */
function stellarAddress(publicKey: Uint8Array): string {
  const payload = concatBytes(new Uint8Array([6 << 3]), publicKey)
  const crc = crc16(Buffer.from(payload))
  return base32nopad.encode(concatBytes(payload, new Uint8Array([crc[1]!, crc[0]!])))
}

/** XRP classic address: ripple-alphabet base58check of 0x00 ‖ hash160(pubkey). */
function xrpAddress(publicKey: Uint8Array): string {
  const payload = concatBytes(new Uint8Array([0]), hash160(publicKey))
  const checksum = sha256(sha256(payload)).slice(0, 4)
  return base58xrp.encode(concatBytes(payload, checksum))
}

/**
 * A Spark address: bech32m (HRP `spark` on mainnet, `sparkrt` on regtest) of the `SparkAddress`
 * protobuf message holding only the identity public key, which serializes as field 1's tag
 * (0x0a), its length (33) and the compressed secp256k1 key.
 */
function sparkAddress(hrp: 'spark' | 'sparkrt', publicKey: Uint8Array): string {
  const message = concatBytes(new Uint8Array([0x0a, publicKey.length]), publicKey)
  return bech32m.encode(hrp, bech32m.toWords(message), SPARK_ADDRESS_LIMIT)
}

/** Spark's longest address (its invoices share the encoding); a bare address is 70 characters. */
const SPARK_ADDRESS_LIMIT = 1024

/** A secp256k1 point (a public key decoded, or computed by a derivation). */
export type SecpPoint = ReturnType<typeof secp256k1.Point.fromBytes>

function assertKey(
  format: AddressFormat,
  publicKey: Uint8Array,
  point: { value?: SecpPoint },
): 'secp256k1' | 'ed25519' {
  if (!(publicKey instanceof Uint8Array)) throw new CryptoInputError('publicKey must be bytes', 'publicKey')
  if (publicKey.length === 33) {
    // Decoding a compressed key is a square root: done once, or not at all when the caller has it.
    try {
      point.value ??= secp256k1.Point.fromBytes(publicKey)
    } catch {
      throw new CryptoInputError('publicKey is not a valid compressed secp256k1 point', 'publicKey')
    }
    if (!curvesOfAddressFormat(format).includes('CURVE_SECP256K1'))
      throw new CryptoInputError(`${format} needs an ed25519 public key`, 'addressFormat')
    return 'secp256k1'
  }
  if (publicKey.length === 32) {
    if (!curvesOfAddressFormat(format).includes('CURVE_ED25519'))
      throw new CryptoInputError(`${format} needs a secp256k1 public key`, 'addressFormat')
    return 'ed25519'
  }
  throw new CryptoInputError(
    'publicKey must be 33 bytes (compressed secp256k1) or 32 bytes (ed25519)',
    'publicKey',
  )
}

/**
 * The address string of `publicKey` in `format` (the `ADDRESS_FORMAT_*` values of `@latchkey/protocol`).
 * `publicKey`: compressed 33-byte secp256k1 key or 32-byte ed25519 key. `point`: the secp256k1 key's
 * point when the caller computed it (a derivation), which spares decoding it (a square root).
 */
export function addressFromPublicKey(
  format: AddressFormat,
  publicKey: Uint8Array,
  point?: SecpPoint,
): string {
  if (!(ADDRESS_FORMATS as readonly string[]).includes(format))
    throw new CryptoInputError(`unknown addressFormat ${String(format)}`, 'addressFormat')
  const decoded: { value?: SecpPoint } = point ? { value: point } : {}
  const kind = assertKey(format, publicKey, decoded)
  const uncompressedSecp = () => decoded.value!.toBytes(false)
  if ((BITCOIN_ADDRESS_FORMATS as readonly string[]).includes(format))
    return bitcoinAddress(format as BitcoinAddressFormat, publicKey)
  switch (format) {
    case 'ADDRESS_FORMAT_COMPRESSED':
      return bytesToHex(publicKey)
    case 'ADDRESS_FORMAT_UNCOMPRESSED':
      return kind === 'ed25519' ? bytesToHex(publicKey) : bytesToHex(uncompressedSecp())
    case 'ADDRESS_FORMAT_ETHEREUM': {
      const hash = keccak_256(uncompressedSecp().slice(1))
      return toChecksumAddress(bytesToHex(hash.slice(-20)))
    }
    case 'ADDRESS_FORMAT_TRON': {
      const hash = keccak_256(uncompressedSecp().slice(1))
      return base58check.encode(concatBytes(new Uint8Array([0x41]), hash.slice(-20)))
    }
    case 'ADDRESS_FORMAT_COSMOS':
      return bech32.encode('cosmos', bech32.toWords(hash160(publicKey)))
    case 'ADDRESS_FORMAT_SEI':
      return bech32.encode('sei', bech32.toWords(hash160(publicKey)))
    case 'ADDRESS_FORMAT_XRP':
      return xrpAddress(publicKey)
    case 'ADDRESS_FORMAT_DOGE_MAINNET':
      return base58check.encode(concatBytes(new Uint8Array([0x1e]), hash160(publicKey)))
    case 'ADDRESS_FORMAT_DOGE_TESTNET':
      return base58check.encode(concatBytes(new Uint8Array([0x71]), hash160(publicKey)))
    case 'ADDRESS_FORMAT_SOLANA':
      return base58.encode(publicKey)
    case 'ADDRESS_FORMAT_SUI':
      // Sui: BLAKE2b-256 over the signature-scheme flag (0x00 = ed25519) ‖ public key.
      return '0x' + bytesToHex(blake2b(concatBytes(new Uint8Array([0]), publicKey), { dkLen: 32 }))
    case 'ADDRESS_FORMAT_APTOS':
      // Aptos: SHA3-256 over public key ‖ scheme byte (0x00 = single ed25519).
      return '0x' + bytesToHex(sha3_256(concatBytes(publicKey, new Uint8Array([0]))))
    case 'ADDRESS_FORMAT_XLM':
      return stellarAddress(publicKey)
    case 'ADDRESS_FORMAT_TON_V3R2':
      return tonWalletAddress('V3R2', publicKey)
    case 'ADDRESS_FORMAT_TON_V4R2':
      return tonWalletAddress('V4R2', publicKey)
    case 'ADDRESS_FORMAT_TON_V5R1':
      return tonWalletAddress('V5R1', publicKey)
    case 'ADDRESS_FORMAT_SPARK_MAINNET':
      return sparkAddress('spark', publicKey)
    case 'ADDRESS_FORMAT_SPARK_REGTEST':
      return sparkAddress('sparkrt', publicKey)
  }
  throw new CryptoInputError(`unknown addressFormat ${String(format)}`, 'addressFormat')
}

/** EIP-55 mixed-case checksum of a 20-byte hex address (with or without 0x). */
export function toChecksumAddress(address: string): string {
  const lower = address.toLowerCase().replace(/^0x/, '')
  if (!/^[0-9a-f]{40}$/.test(lower)) throw new CryptoInputError('not a 20-byte hex address', 'address')
  return addr.addChecksum(lower)
}

/**
 * The spellings an address may be stored in, as named first: a 20-byte hex one also in lower case
 * and checksummed (EIP-55), other hex in lower case, anything else only as named. Looked up each
 * through the address index, they find a hex address named in any case.
 */
export function addressSpellings(address: string): string[] {
  const lower = address.toLowerCase()
  const spellings = new Set([address])
  if (/^0x[0-9a-f]+$/.test(lower)) spellings.add(lower)
  if (/^0x[0-9a-f]{40}$/.test(lower)) spellings.add(toChecksumAddress(lower))
  return [...spellings]
}
