import { MNEMONIC_LENGTHS } from '@latchkey/protocol'
import { utf8ToBytes } from '@noble/hashes/utils.js'
import * as bip39 from '@scure/bip39'
import { wordlist } from '@scure/bip39/wordlists/english.js'
import { CryptoInputError } from './errors.ts'

/** A fresh BIP-39 English mnemonic of `length` words (12, 15, 18, 21 or 24). */
export function generateMnemonic(length: number): string {
  if (!(MNEMONIC_LENGTHS as readonly number[]).includes(length))
    throw new CryptoInputError(
      `mnemonicLength must be one of ${MNEMONIC_LENGTHS.join(', ')}, got ${String(length)}`,
      'mnemonicLength',
    )
  // 12 words = 128 bits of entropy, each 3 further words add 32 bits.
  return bip39.generateMnemonic(wordlist, (length / 3) * 32)
}

/** Normalises whitespace so pasted mnemonics (double spaces, newlines) validate like typed ones. */
export function normalizeMnemonic(mnemonic: string): string {
  return mnemonic.normalize('NFKD').trim().toLowerCase().split(/\s+/).join(' ')
}

/** True when `mnemonic` is a BIP-39 English mnemonic with a valid checksum. */
export function validateMnemonic(mnemonic: string): boolean {
  if (typeof mnemonic !== 'string') return false
  return bip39.validateMnemonic(normalizeMnemonic(mnemonic), wordlist)
}

/** The 64-byte BIP-39 seed (empty passphrase). Throws CryptoInputError on an invalid mnemonic. */
export function mnemonicToSeed(mnemonic: string): Uint8Array {
  if (!validateMnemonic(mnemonic))
    throw new CryptoInputError('mnemonic is not a valid BIP-39 mnemonic', 'mnemonic')
  return bip39.mnemonicToSeedSync(normalizeMnemonic(mnemonic))
}

/**
 * BIP-39 seed of a mnemonic (empty passphrase). PBKDF2-HMAC-SHA512 with 2048 rounds runs natively
 * through WebCrypto where available (native, far cheaper than in JS); the JS path is the fallback.
 */
export async function seedOf(mnemonic: string): Promise<Uint8Array> {
  const normalized = normalizeMnemonic(mnemonic)
  const subtle = globalThis.crypto?.subtle
  if (subtle && validateMnemonic(normalized)) {
    try {
      const key = await subtle.importKey('raw', utf8ToBytes(normalized), 'PBKDF2', false, ['deriveBits'])
      const bits = await subtle.deriveBits(
        { name: 'PBKDF2', hash: 'SHA-512', salt: utf8ToBytes('mnemonic'), iterations: 2048 },
        key,
        512,
      )
      return new Uint8Array(bits)
    } catch {}
  }
  return mnemonicToSeed(normalized)
}
