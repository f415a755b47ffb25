// What a Solana "message" (raw ed25519 over its bytes) must not be. Besides a Solana transaction,
// the key may hold accounts of other ed25519 chains (a wallet's accounts at one path, a private key
// with several address formats, a raw key used elsewhere), whose transactions are raw ed25519
// signatures too: Sui, Stellar and TON sign a 32-byte digest, Aptos a salted BCS transaction. A rule
// on the bytes, not a look at the key's other accounts: it needs no round trip, holds for the
// `kind: 'ed25519'` shortcut and for keys whose other uses the kit cannot see.
import { hexToBytes } from './hex.ts'
import { isSolanaTransactionMessage } from './solanaTransactionMessage.ts'

/**
 * sha3-256("APTOS::RawTransaction") and sha3-256("APTOS::RawTransactionWithData"): what an Aptos
 * account's ed25519 key signs is one of them followed by the BCS of the transaction (single signer;
 * multi-agent and fee payer). Hard-coded so that core carries no SHA-3; solanaMessageRefusal.test.ts
 * computes them.
 */
export const APTOS_SIGNING_SALTS = [
  'b5e97db07fa0bd0e5598aa3643a9bc6f6693bddc1a9fec9e674a461eaa00b193',
  '5efa3c4f02f83a0f4b2d69fc95c607cc02825cc4e7be536ef0992df050d9e67c',
].map(hexToBytes)

export type SolanaMessageRule =
  | 'MESSAGE_IS_TRANSACTION'
  | 'MESSAGE_IS_DIGEST'
  | 'MESSAGE_IS_APTOS_TRANSACTION'
  | 'MESSAGE_IS_APTOS_STRUCT'

const startsWith = (bytes: Uint8Array, prefix: Uint8Array) =>
  bytes.length >= prefix.length && prefix.every((b, i) => bytes[i] === b)

/** Valid UTF-8 with no control characters but tab, line feed and carriage return. */
function isText(bytes: Uint8Array): boolean {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for
    return !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text)
  } catch {
    return false
  }
}

/**
 * Aptos Move's `ed25519::signature_verify_strict_t<T>` (any module's off-chain authorizations):
 * the BCS of `SignedMessage { type_info: TypeInfo { account_address, module_name, struct_name },
 * inner: T }`: a 32-byte address, then the module's and the struct's names, each after its
 * ULEB128 length. Text is let through: a module address (0x1 is 31 zero bytes and 0x01) is not
 * text, and the signer of a message does not choose it.
 */
function isAptosSignedStruct(bytes: Uint8Array): boolean {
  let at = 32
  const name = (rest: RegExp): boolean => {
    let length = 0
    for (let shift = 0; shift < 14; shift += 7) {
      const byte = bytes[at++]
      if (byte === undefined) return false
      length |= (byte & 0x7f) << shift
      if (!(byte & 0x80)) break
      if (shift === 7) return false
    }
    if (length === 0 || at + length > bytes.length) return false
    const chars = String.fromCharCode(...bytes.subarray(at, at + length))
    at += length
    return rest.test(chars)
  }
  // A struct's name carries its type arguments: `Coin<0x1::aptos_coin::AptosCoin>`.
  return (
    bytes.length > 34 && name(/^[A-Za-z_][A-Za-z0-9_]*$/) && name(/^[A-Za-z_][\x20-\x7e]*$/) && !isText(bytes)
  )
}

/**
 * Why `bytes` must not be signed as a Solana message by the ed25519 key `signer`, or undefined:
 * `MESSAGE_IS_TRANSACTION` a compiled Solana transaction message `signer` must sign;
 * `MESSAGE_IS_DIGEST` any 32 bytes (the digest Sui, Stellar and TON transactions sign; text is no
 * exception: about 2^36 tries of a transaction's memo or gas make its digest valid UTF-8);
 * `MESSAGE_IS_APTOS_TRANSACTION` an Aptos signing message (a salt above, then the transaction);
 * `MESSAGE_IS_APTOS_STRUCT` bytes laid out as a Move `SignedMessage` (see isAptosSignedStruct).
 */
export function solanaMessageRefusal(
  bytes: Uint8Array,
  signer: Uint8Array,
): { rule: SolanaMessageRule; reason: string } | undefined {
  if (isSolanaTransactionMessage(bytes, signer))
    return {
      rule: 'MESSAGE_IS_TRANSACTION',
      reason:
        'is a Solana transaction that this account would authorize; sign transactions with signTransaction',
    }
  if (bytes.length === 32)
    return {
      rule: 'MESSAGE_IS_DIGEST',
      reason:
        'is 32 bytes, the size of the digest a Sui, Stellar or TON transaction signs with the same key; sign a longer message (say what it is for)',
    }
  if (isAptosSigningMessage(bytes))
    return {
      rule: 'MESSAGE_IS_APTOS_TRANSACTION',
      reason:
        'is an Aptos transaction (it begins with Aptos’s transaction salt) that the same key would authorize',
    }
  if (isAptosSignedStruct(bytes))
    return {
      rule: 'MESSAGE_IS_APTOS_STRUCT',
      reason:
        'is laid out as an Aptos Move signed struct (signature_verify_strict_t) that the same key would authorize',
    }
  return undefined
}

/**
 * Whether `bytes` begin with an Aptos transaction salt: an Aptos signing message, whatever else
 * they parse as (one of a fee-payer transaction, its script argument chosen, parses as a Solana
 * legacy message naming any key among its signers).
 */
export const isAptosSigningMessage = (bytes: Uint8Array): boolean =>
  APTOS_SIGNING_SALTS.some((salt) => startsWith(bytes, salt))
