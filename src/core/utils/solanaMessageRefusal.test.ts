/**
 * What a Solana "message" must not be, byte by byte: 32 bytes (the digest a Sui, Stellar or TON
 * transaction signs), an Aptos signing message (salted RawTransaction), a Move signed struct. Text
 * (Sign In With Solana) and other bytes are let through.
 */
import { blake2b } from '@noble/hashes/blake2.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { sha3_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, concatBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { APTOS_SIGNING_SALTS, solanaMessageRefusal } from './solanaMessageRefusal.ts'

const signer = new Uint8Array(32).fill(7)
const ruleOf = (bytes: Uint8Array) => solanaMessageRefusal(bytes, signer)?.rule
const bcsString = (s: string) => concatBytes(new Uint8Array([s.length]), utf8ToBytes(s))

describe('solanaMessageRefusal', () => {
  it('hard-codes Aptos’s transaction salts as sha3-256 of their names', () => {
    expect(APTOS_SIGNING_SALTS.map(bytesToHex)).toEqual(
      ['APTOS::RawTransaction', 'APTOS::RawTransactionWithData'].map((name) =>
        bytesToHex(sha3_256(utf8ToBytes(name))),
      ),
    )
  })

  it('refuses any 32 bytes, text too: a digest can be ground until it decodes as text', () => {
    const suiDigest = blake2b(concatBytes(new Uint8Array([0, 0, 0]), new Uint8Array(200).fill(1)), {
      dkLen: 32,
    })
    const stellarDigest = sha256(
      concatBytes(
        sha256(utf8ToBytes('Public Global Stellar Network ; September 2015')),
        new Uint8Array([0, 0, 0, 2]),
      ),
    )
    for (const bytes of [suiDigest, stellarDigest, new Uint8Array(32), utf8ToBytes('a'.repeat(32))])
      expect(ruleOf(bytes)).toBe('MESSAGE_IS_DIGEST')
  })

  it('refuses Aptos signing messages, single signer and multi-agent or fee payer', () => {
    for (const salt of APTOS_SIGNING_SALTS) {
      expect(ruleOf(salt)).toBe('MESSAGE_IS_DIGEST') // the salt alone is 32 bytes
      expect(ruleOf(concatBytes(salt, new Uint8Array(120).fill(3)))).toBe('MESSAGE_IS_APTOS_TRANSACTION')
    }
  })

  it('refuses a Move signed struct (0x1::account::RotationProofChallenge), not text shaped like one', () => {
    const framework = new Uint8Array(32)
    framework[31] = 1
    const challenge = concatBytes(
      framework,
      bcsString('account'),
      bcsString('RotationProofChallenge'),
      new Uint8Array(8), // sequence_number
      new Uint8Array(32).fill(9), // originator
      new Uint8Array(32).fill(9), // current_auth_key
      concatBytes(new Uint8Array([32]), new Uint8Array(32).fill(5)), // new_public_key
    )
    expect(ruleOf(challenge)).toBe('MESSAGE_IS_APTOS_STRUCT')
    // A generic struct name, and a third-party module address.
    const generic = concatBytes(
      new Uint8Array(32).fill(0xab),
      bcsString('coin'),
      bcsString('Permit<0x1::aptos_coin::AptosCoin>'),
      new Uint8Array(8),
    )
    expect(ruleOf(generic)).toBe('MESSAGE_IS_APTOS_STRUCT')
    // Text laid out the same way (an address that is text; a tab and a line feed as the lengths)
    // is a message.
    const textual = utf8ToBytes(`${'x'.repeat(32)}\tsignin_to\nExampleApp: welcome`)
    expect(textual[32]).toBe(9)
    expect(ruleOf(textual)).toBeUndefined()
    expect(ruleOf(concatBytes(new Uint8Array(32).fill(0xab), textual.subarray(32)))).toBe(
      'MESSAGE_IS_APTOS_STRUCT',
    )
  })

  it('lets text and other bytes through', () => {
    const siws = utf8ToBytes(
      'example.com wants you to sign in with your Solana account:\n5Q544fKrFoe6tsEbD7S8EmxGTJYAKtTVhAW5Q5pge4j1\n\nSign in to Example\n\nURI: https://example.com\nVersion: 1\nChain ID: mainnet\nNonce: 32891756\nIssued At: 2026-01-01T00:00:00Z',
    )
    const offChain = concatBytes(new Uint8Array([0xff]), utf8ToBytes('solana offchain'), new Uint8Array(40))
    for (const bytes of [
      siws,
      utf8ToBytes('gm'),
      new Uint8Array(),
      new Uint8Array(31),
      new Uint8Array(33),
      offChain,
    ])
      expect(ruleOf(bytes)).toBeUndefined()
    for (let i = 0; i < 200; i++) {
      const bytes = crypto.getRandomValues(new Uint8Array(33 + i))
      expect(ruleOf(bytes), bytesToHex(bytes)).toBeUndefined()
    }
  })
})
