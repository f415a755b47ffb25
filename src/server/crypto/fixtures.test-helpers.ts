import { mnemonicToSeed } from './mnemonic.ts'

/** The BIP-39 reference mnemonic used by BIP-44/49/84/86, SEP-0005, Ledger and most SDK tests. */
export const ABANDON_MNEMONIC =
  'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about'

let abandonSeed: Uint8Array | undefined
/** PBKDF2 (2048 rounds) is the slow part of derivation; compute the shared seed once per worker. */
export function abandonSeedOnce(): Uint8Array {
  abandonSeed ??= mnemonicToSeed(ABANDON_MNEMONIC)
  return abandonSeed
}
