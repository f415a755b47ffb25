import { gcm } from '@noble/ciphers/aes.js'
import { randomBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { base64urlnopad } from '@scure/base'
import { CryptoInputError } from './errors.ts'

/** Seals secrets at rest (mnemonics, private keys, proxy keys) under one 32-byte key. */
export interface Sealer {
  /** AES-256-GCM with a random 12-byte nonce; returns `v1.<nonce b64url>.<ciphertext b64url>`. */
  seal(plaintext: Uint8Array | string): string
  /** Opens a `v1.…` string; throws CryptoInputError when it is malformed or was tampered with. */
  open(sealed: string): Uint8Array
}

const VERSION = 'v1'
const NONCE_LENGTH = 12
/** Binds ciphertexts to this format version so a future v2 cannot be confused with v1. */
const AAD = utf8ToBytes('latchkey-sealer-v1')

export function createSealer(key: Uint8Array): Sealer {
  if (!(key instanceof Uint8Array) || key.length !== 32)
    throw new CryptoInputError('sealer key must be 32 bytes', 'key')
  const sealKey = key.slice()
  return {
    seal(plaintext) {
      const bytes = typeof plaintext === 'string' ? utf8ToBytes(plaintext) : plaintext
      const nonce = randomBytes(NONCE_LENGTH)
      const ciphertext = gcm(sealKey, nonce, AAD).encrypt(bytes)
      return `${VERSION}.${base64urlnopad.encode(nonce)}.${base64urlnopad.encode(ciphertext)}`
    },
    open(sealed) {
      const parts = typeof sealed === 'string' ? sealed.split('.') : []
      if (parts.length !== 3 || parts[0] !== VERSION)
        throw new CryptoInputError('sealed value is not in the v1 format', 'sealed')
      let nonce: Uint8Array
      let ciphertext: Uint8Array
      try {
        nonce = base64urlnopad.decode(parts[1]!)
        ciphertext = base64urlnopad.decode(parts[2]!)
      } catch {
        throw new CryptoInputError('sealed value is not valid base64url', 'sealed')
      }
      if (nonce.length !== NONCE_LENGTH) throw new CryptoInputError('sealed value has a bad nonce', 'sealed')
      try {
        return gcm(sealKey, nonce, AAD).decrypt(ciphertext)
      } catch {
        throw new CryptoInputError('sealed value failed authentication (wrong key or tampered)', 'sealed')
      }
    },
  }
}
