import { MNEMONIC_LENGTHS } from '@latchkey/protocol'
import { sha256 } from '@noble/hashes/sha2.js'
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

/** Each English word's 11-bit index, built once (@scure/bip39 checks the whole list and searches it on every call). */
let wordIndex: Map<string, number> | undefined

/**
 * True when `mnemonic` is a BIP-39 English mnemonic with a valid checksum: 12 to 24 words (a
 * multiple of 3), 11 bits each, the entropy followed by the first `words / 3` bits of its SHA-256.
 * The same answer as @scure/bip39's `validateMnemonic` (mnemonic.test.ts compares them), without
 * its per-call checks of the 2,048-word list, which were a tenth of an imported wallet's time.
 */
export function validateMnemonic(mnemonic: string): boolean {
  if (typeof mnemonic !== 'string') return false
  const words = normalizeMnemonic(mnemonic).split(' ')
  if (words.length < 12 || words.length > 24 || words.length % 3 !== 0) return false
  wordIndex ??= new Map(wordlist.map((word, index) => [word, index]))
  const entropyBytes = (words.length / 3) * 4
  const checksumBits = words.length / 3
  const bytes = new Uint8Array(entropyBytes + 1)
  let carry = 0
  let bits = 0
  let position = 0
  for (const word of words) {
    const index = wordIndex.get(word)
    if (index === undefined) return false
    carry = (carry << 11) | index
    bits += 11
    while (bits >= 8) {
      bits -= 8
      bytes[position++] = (carry >>> bits) & 0xff
      carry &= (1 << bits) - 1
    }
  }
  // What is left after the entropy is the checksum: a whole byte for 24 words, else `bits` bits.
  const checksum = checksumBits === 8 ? bytes[entropyBytes]! : carry
  return checksum === sha256(bytes.subarray(0, entropyBytes))[0]! >> (8 - checksumBits)
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
