/**
 * HPKE (RFC 9180) base mode with DHKEM(P-256, HKDF-SHA256), HKDF-SHA256 and AES-256-GCM, as used by
 * export/import bundles: info = BUNDLE_HPKE_INFO, and
 * AAD = enc (65-byte uncompressed) ‖ receiver public key (65-byte uncompressed).
 *
 * Shared by the service and the browser client, so it only uses noble (no WebCrypto, no Node
 * APIs at import). Opening takes a `dh` callback so the browser can run ECDH with a
 * non-extractable WebCrypto key and the service with noble.
 */
import { gcm } from '@noble/ciphers/aes.js'
import { p256 } from '@noble/curves/nist.js'
import { expand, extract } from '@noble/hashes/hkdf.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { BUNDLE_HPKE_INFO_TEXT, type HpkeCiphertext } from './bundles.ts'

const KEM_ID = 0x0010 // DHKEM(P-256, HKDF-SHA256)
const KDF_ID = 0x0001 // HKDF-SHA256
const AEAD_AES_128_GCM = 0x0001
const AEAD_AES_256_GCM = 0x0002
const MODE_BASE = 0x00
const N_SECRET = 32
const N_NONCE = 12
const HPKE_V1 = utf8ToBytes('HPKE-v1')
const EMPTY = new Uint8Array(0)

/**
 * HPKE `info` of the bundle profile. Not empty: the published
 * client of the public service (@turnkey/crypto, constants AES_KEY_INFO/IV_INFO) bakes
 * info_hash = LabeledExtract("", "info_hash", "turnkey_hpke") into its key schedule, so bundles
 * only interoperate with this value (checked in hpke.test.ts against the installed package).
 */
export const BUNDLE_HPKE_INFO: Uint8Array = utf8ToBytes(BUNDLE_HPKE_INFO_TEXT)

/** I2OSP(n, 2). */
const u16 = (n: number) => new Uint8Array([(n >> 8) & 0xff, n & 0xff])
const KEM_SUITE_ID = concatBytes(utf8ToBytes('KEM'), u16(KEM_ID))
const hpkeSuiteId = (aeadId: number) =>
  concatBytes(utf8ToBytes('HPKE'), u16(KEM_ID), u16(KDF_ID), u16(aeadId))

function labeledExtract(suiteId: Uint8Array, salt: Uint8Array, label: string, ikm: Uint8Array): Uint8Array {
  return extract(sha256, concatBytes(HPKE_V1, suiteId, utf8ToBytes(label), ikm), salt)
}

function labeledExpand(
  suiteId: Uint8Array,
  prk: Uint8Array,
  label: string,
  info: Uint8Array,
  length: number,
) {
  return expand(sha256, prk, concatBytes(u16(length), HPKE_V1, suiteId, utf8ToBytes(label), info), length)
}

/** DHKEM ExtractAndExpand: the KEM shared secret from the DH output and enc ‖ pkRm. */
function kemSharedSecret(dh: Uint8Array, enc: Uint8Array, receiverPublicKey: Uint8Array): Uint8Array {
  const eaePrk = labeledExtract(KEM_SUITE_ID, EMPTY, 'eae_prk', dh)
  return labeledExpand(KEM_SUITE_ID, eaePrk, 'shared_secret', concatBytes(enc, receiverPublicKey), N_SECRET)
}

/** RFC 9180 KeySchedule for mode_base (no PSK): AEAD key and base nonce. */
function keySchedule(sharedSecret: Uint8Array, info: Uint8Array, aeadId: number) {
  const suiteId = hpkeSuiteId(aeadId)
  const pskIdHash = labeledExtract(suiteId, EMPTY, 'psk_id_hash', EMPTY)
  const infoHash = labeledExtract(suiteId, EMPTY, 'info_hash', info)
  const context = concatBytes(new Uint8Array([MODE_BASE]), pskIdHash, infoHash)
  const secret = labeledExtract(suiteId, sharedSecret, 'secret', EMPTY)
  const keyLength = aeadId === AEAD_AES_128_GCM ? 16 : 32
  return {
    key: labeledExpand(suiteId, secret, 'key', context, keyLength),
    baseNonce: labeledExpand(suiteId, secret, 'base_nonce', context, N_NONCE),
  }
}

function uncompressed(publicKey: Uint8Array, what: string): Uint8Array {
  try {
    return p256.Point.fromBytes(publicKey).toBytes(false)
  } catch {
    throw new Error(`${what} is not a valid P-256 public key`)
  }
}

/** Parameters of the RFC 9180 core, exposed so tests can run the RFC's own vectors. */
export interface HpkeCoreSealInput {
  plaintext: Uint8Array
  receiverPublicKey: Uint8Array
  info: Uint8Array
  aad: Uint8Array
  /** The ephemeral key; fixed only by RFC vector tests. */
  ephemeralPrivateKey: Uint8Array
  /** AES-128-GCM exists only to run RFC 9180 A.3 (which has no AES-256 P-256 vector). */
  aead?: 'AES_128_GCM' | 'AES_256_GCM'
}

/** @internal Single-shot HPKE base-mode seal (sequence 0) with explicit info, aad and ephemeral key. */
export function _hpkeSealCore(input: HpkeCoreSealInput): { enc: Uint8Array; ciphertext: Uint8Array } {
  const aeadId = input.aead === 'AES_128_GCM' ? AEAD_AES_128_GCM : AEAD_AES_256_GCM
  const receiver = uncompressed(input.receiverPublicKey, 'receiverPublicKey')
  const enc = p256.getPublicKey(input.ephemeralPrivateKey, false)
  const dh = p256.getSharedSecret(input.ephemeralPrivateKey, receiver, true).slice(1)
  return { enc, ciphertext: sealAgreed({ ...input, aeadId, enc, dh, receiver }) }
}

/** The seal once the key agreement is done: `dh` of the ephemeral key `enc` with `receiver`. */
function sealAgreed(input: {
  plaintext: Uint8Array
  info: Uint8Array
  aad: Uint8Array
  aeadId: number
  enc: Uint8Array
  dh: Uint8Array
  receiver: Uint8Array
}): Uint8Array {
  const { key, baseNonce } = keySchedule(
    kemSharedSecret(input.dh, input.enc, input.receiver),
    input.info,
    input.aeadId,
  )
  return gcm(key, baseNonce, input.aad).encrypt(input.plaintext)
}

/** Parameters of the RFC 9180 open core. */
export interface HpkeCoreOpenInput {
  enc: Uint8Array
  ciphertext: Uint8Array
  receiverPublicKey: Uint8Array
  info: Uint8Array
  aad: Uint8Array
  dh: (senderPublic: Uint8Array) => Promise<Uint8Array> | Uint8Array
  aead?: 'AES_128_GCM' | 'AES_256_GCM'
}

/** @internal Single-shot HPKE base-mode open (sequence 0). Throws when authentication fails. */
export async function _hpkeOpenCore(input: HpkeCoreOpenInput): Promise<Uint8Array> {
  const aeadId = input.aead === 'AES_128_GCM' ? AEAD_AES_128_GCM : AEAD_AES_256_GCM
  const receiver = uncompressed(input.receiverPublicKey, 'receiverPublicKey')
  const enc = uncompressed(input.enc, 'encappedPublic')
  const dh = await input.dh(enc)
  if (!(dh instanceof Uint8Array) || dh.length !== 32)
    throw new Error('dh callback must return the 32-byte ECDH x-coordinate')
  const { key, baseNonce } = keySchedule(kemSharedSecret(dh, enc, receiver), input.info, aeadId)
  try {
    return gcm(key, baseNonce, input.aad).decrypt(input.ciphertext)
  } catch {
    throw new Error('HPKE decryption failed: wrong key or tampered ciphertext')
  }
}

export interface HpkeSealInput {
  plaintext: Uint8Array
  /** Receiver P-256 public key (65-byte uncompressed; 33-byte compressed also accepted). */
  receiverPublicKey: Uint8Array
  /**
   * A fresh ephemeral key pair and its ECDH with the (uncompressed) receiver key, done natively
   * (Node's `crypto.createECDH('prime256v1')`, some 20 times faster than in JS): `enc` the ephemeral
   * public key (65 bytes, uncompressed), `dh` the 32-byte shared x-coordinate.
   * @default noble's P-256, with a key from `crypto.getRandomValues`
   */
  agree?: (receiverPublicKey: Uint8Array) => { enc: Uint8Array; dh: Uint8Array }
}

/** Encrypts `plaintext` to `receiverPublicKey` with a fresh ephemeral key (bundle HPKE profile). */
export function hpkeSeal(input: HpkeSealInput): HpkeCiphertext {
  const receiver = uncompressed(input.receiverPublicKey, 'receiverPublicKey')
  let enc: Uint8Array
  let dh: Uint8Array
  if (input.agree) {
    ;({ enc, dh } = input.agree(receiver))
    if (enc.length !== 65 || dh.length !== 32)
      throw new Error('agree must return a 65-byte ephemeral public key and a 32-byte shared secret')
  } else {
    const ephemeralPrivateKey = p256.utils.randomSecretKey()
    enc = p256.getPublicKey(ephemeralPrivateKey, false)
    dh = p256.getSharedSecret(ephemeralPrivateKey, receiver, true).slice(1)
    ephemeralPrivateKey.fill(0)
  }
  const ciphertext = sealAgreed({
    plaintext: input.plaintext,
    info: BUNDLE_HPKE_INFO,
    aad: concatBytes(enc, receiver),
    aeadId: AEAD_AES_256_GCM,
    enc,
    dh,
    receiver,
  })
  dh.fill(0)
  return { encappedPublic: bytesToHex(enc), ciphertext: bytesToHex(ciphertext) }
}

export interface HpkeOpenInput {
  ciphertext: HpkeCiphertext
  /** The receiver's own P-256 public key (65-byte uncompressed; 33-byte compressed accepted). */
  receiverPublicKey: Uint8Array
  /**
   * ECDH with the receiver's private key: given the sender's (uncompressed) public key, return
   * the 32-byte shared x-coordinate. The browser passes WebCrypto `deriveBits` on a
   * non-extractable key; the service passes `p256.getSharedSecret(priv, pub).slice(1)`.
   */
  dh: (senderPublic: Uint8Array) => Promise<Uint8Array> | Uint8Array
}

/** Decrypts a bundle HPKE ciphertext. Throws on malformed input, a wrong key or tampering. */
export async function hpkeOpen(input: HpkeOpenInput): Promise<Uint8Array> {
  const { encappedPublic, ciphertext } = input.ciphertext ?? ({} as Partial<HpkeCiphertext>)
  if (typeof encappedPublic !== 'string' || !/^([0-9a-fA-F]{2})+$/.test(encappedPublic))
    throw new Error('encappedPublic must be hex')
  if (typeof ciphertext !== 'string' || !/^([0-9a-fA-F]{2})+$/.test(ciphertext))
    throw new Error('ciphertext must be hex')
  const enc = uncompressed(hexToBytes(encappedPublic.toLowerCase()), 'encappedPublic')
  const receiver = uncompressed(input.receiverPublicKey, 'receiverPublicKey')
  return _hpkeOpenCore({
    enc,
    ciphertext: hexToBytes(ciphertext.toLowerCase()),
    receiverPublicKey: receiver,
    info: BUNDLE_HPKE_INFO,
    aad: concatBytes(enc, receiver),
    dh: input.dh,
  })
}
