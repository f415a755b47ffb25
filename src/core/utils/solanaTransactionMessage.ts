// A structural check of Solana's compiled transaction message layout, hand-written so that the
// kit's core does not carry @solana/kit's decoders (tested against messages @solana/kit compiles).

/**
 * True when `bytes` begin with a compiled Solana transaction message (legacy, or versioned v0) in
 * which `signer` (a 32-byte ed25519 public key) is a required signer: an ed25519 signature of
 * `bytes` by `signer` could then authorize that transaction on chain. Layout: [0x80 | version,]
 * header (required signatures, read-only signed, read-only unsigned), compact-u16 count of 32-byte
 * account keys, 32-byte blockhash, compact-u16 count of instructions (program index, compact-u16
 * count of account indexes, compact-u16 length of data), and for v0 the address table lookups.
 * Bytes after a complete message still count: the layout, not the length, is what the chain reads.
 */
export function isSolanaTransactionMessage(bytes: Uint8Array, signer: Uint8Array): boolean {
  let at = 0
  const byte = (): number => {
    if (at >= bytes.length) throw RangeError()
    return bytes[at++] as number
  }
  const skip = (length: number) => {
    if (at + length > bytes.length) throw RangeError()
    at += length
  }
  // Solana's short_vec: 7 bits a byte, at most 3 bytes (non-canonical forms pass: refusing more is safe).
  const compactU16 = (): number => {
    let value = 0
    for (let shift = 0; shift < 21; shift += 7) {
      const next = byte()
      value |= (next & 0x7f) << shift
      if (!(next & 0x80)) return value
    }
    throw RangeError()
  }
  try {
    let versioned = false
    if ((bytes[0] ?? 0) & 0x80) {
      // Only version 0 exists; 0xff starts Solana's off-chain message format, which stays a message.
      if (byte() !== 0x80) return false
      versioned = true
    }
    const requiredSignatures = byte()
    skip(2)
    const keys = compactU16()
    const keysAt = at
    skip(32 * keys)
    skip(32) // recent blockhash (or durable nonce)
    const instructions = compactU16()
    for (let i = 0; i < instructions; i++) {
      skip(1)
      skip(compactU16())
      skip(compactU16())
    }
    if (versioned) {
      const lookups = compactU16()
      for (let i = 0; i < lookups; i++) {
        skip(32)
        skip(compactU16())
        skip(compactU16())
      }
    }
    for (let i = 0; i < Math.min(requiredSignatures, keys); i++) {
      const key = bytes.subarray(keysAt + 32 * i, keysAt + 32 * (i + 1))
      if (signer.length === 32 && key.every((b, j) => b === signer[j])) return true
    }
    return false
  } catch {
    return false
  }
}
