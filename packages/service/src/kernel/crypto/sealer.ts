import { gcm } from '@noble/ciphers/aes.js'
import { hmac } from '@noble/hashes/hmac.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, randomBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { base64urlnopad } from '@scure/base'
import { CryptoInputError } from './errors.ts'

/** A master key and the version it is known by (the database's keyring numbers them from 1). */
export interface SealingKey {
  version: number
  key: Uint8Array
}

/**
 * Seals secrets at rest (mnemonics, private keys, proxy keys) under versioned 32-byte master keys:
 * each sealed value names the version of the key it was sealed under, so that a rotation can
 * re-seal them one by one while every value stays readable.
 */
export interface Sealer {
  /**
   * AES-256-GCM with a random 12-byte nonce under key `version` (default: the newest held).
   * Version 1 gives `v1.<nonce b64url>.<ciphertext b64url>` (the format of every release before
   * key versions, so a database never rotated stays readable by them); version n > 1 gives
   * `v2.<n>.<nonce>.<ciphertext>`.
   */
  seal(plaintext: Uint8Array | string, version?: number): string
  /** Opens a sealed value under whichever held key it names; throws CryptoInputError when it is malformed, names a key not held, or was tampered with. */
  open(sealed: string): Uint8Array
  /** The versions held, oldest first. */
  readonly versions: readonly number[]
}

const NONCE_LENGTH = 12
/** Binds version-1 ciphertexts to their format, as every earlier release sealed them. */
const AAD_V1 = utf8ToBytes('latchkey-sealer-v1')
/** Binds a ciphertext to its format and key version, so a value cannot be passed off as another version's. */
const aadOf = (version: number) => (version === 1 ? AAD_V1 : utf8ToBytes(`latchkey-sealer-v2.${version}`))

const PLAIN_VERSION = /^[1-9][0-9]{0,8}$/

/**
 * The key version a sealed value names (1 for the `v1` format), or undefined when `value` is not
 * shaped like a sealed value. Says nothing about whether it opens.
 */
export function sealedVersion(value: string): number | undefined {
  const parts = value.split('.')
  if (parts.length === 3 && parts[0] === 'v1') return 1
  if (parts.length === 4 && parts[0] === 'v2' && PLAIN_VERSION.test(parts[1]!)) {
    const version = Number(parts[1])
    return version > 1 ? version : undefined
  }
  return undefined
}

/**
 * Recognises a master key without revealing it: HMAC-SHA256 of a fixed label under the key, hex.
 * The keyring stores it to tell which key a process was given.
 */
export function masterKeyCheck(key: Uint8Array): string {
  return bytesToHex(hmac(sha256, key, utf8ToBytes('latchkey master key check')))
}

function checkKey(key: unknown, field: string): Uint8Array {
  if (!(key instanceof Uint8Array) || key.length !== 32)
    throw new CryptoInputError('sealer key must be 32 bytes', field)
  return key.slice()
}

/**
 * AES-256-GCM under `key` with `nonce` and additional data `aad`: `encrypt` gives the ciphertext
 * followed by its 16-byte tag, `decrypt` takes that and throws when the tag does not match. The
 * shape of `@noble/ciphers`' `gcm`, which it defaults to; a Node thread may pass OpenSSL's.
 */
export type GcmCipher = (
  key: Uint8Array,
  nonce: Uint8Array,
  aad: Uint8Array,
) => { encrypt(plaintext: Uint8Array): Uint8Array; decrypt(sealed: Uint8Array): Uint8Array }

/**
 * A sealer over one key (version 1) or several versioned keys. `cipher` does the AES-GCM (the
 * crypto workers pass Node's, which opens a key several times faster than JavaScript; the sealed
 * format is the same).
 */
export function createSealer(keys: Uint8Array | readonly SealingKey[], cipher: GcmCipher = gcm): Sealer {
  const held = new Map<number, Uint8Array>()
  if (keys instanceof Uint8Array) held.set(1, checkKey(keys, 'key'))
  else {
    if (!Array.isArray(keys) || keys.length === 0) throw new CryptoInputError('sealer needs a key', 'key')
    for (const { version, key } of keys) {
      if (!Number.isSafeInteger(version) || version < 1 || held.has(version))
        throw new CryptoInputError(`sealer key version ${version} is not a new positive integer`, 'key')
      held.set(version, checkKey(key, 'key'))
    }
  }
  const versions = [...held.keys()].sort((a, b) => a - b)
  const newest = versions.at(-1)!
  return {
    versions,
    seal(plaintext, version = newest) {
      const key = held.get(version)
      if (!key) throw new CryptoInputError(`no master key of version ${version} is held`, 'version')
      const bytes = typeof plaintext === 'string' ? utf8ToBytes(plaintext) : plaintext
      const nonce = randomBytes(NONCE_LENGTH)
      const ciphertext = base64urlnopad.encode(cipher(key, nonce, aadOf(version)).encrypt(bytes))
      const encodedNonce = base64urlnopad.encode(nonce)
      return version === 1
        ? `v1.${encodedNonce}.${ciphertext}`
        : `v2.${version}.${encodedNonce}.${ciphertext}`
    },
    open(sealed) {
      const version = typeof sealed === 'string' ? sealedVersion(sealed) : undefined
      if (version === undefined)
        throw new CryptoInputError('sealed value is not in a sealed format', 'sealed')
      const parts = sealed.split('.')
      const key = held.get(version)
      if (!key)
        throw new CryptoInputError(
          `sealed value names master key version ${version}, which this process was not given`,
          'sealed',
        )
      let nonce: Uint8Array
      let ciphertext: Uint8Array
      try {
        nonce = base64urlnopad.decode(parts.at(-2)!)
        ciphertext = base64urlnopad.decode(parts.at(-1)!)
      } catch {
        throw new CryptoInputError('sealed value is not valid base64url', 'sealed')
      }
      if (nonce.length !== NONCE_LENGTH) throw new CryptoInputError('sealed value has a bad nonce', 'sealed')
      try {
        return cipher(key, nonce, aadOf(version)).decrypt(ciphertext)
      } catch {
        throw new CryptoInputError('sealed value failed authentication (wrong key or tampered)', 'sealed')
      }
    },
  }
}
