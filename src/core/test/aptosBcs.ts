// Aptos's BCS, as far as the tests that build Aptos signing messages need it (what a Solana message
// or transaction of the same ed25519 key must never be).

/** `n` as BCS's little-endian u64. */
export const u64 = (n: bigint) => {
  const out = new Uint8Array(8)
  new DataView(out.buffer).setBigUint64(0, n, true)
  return out
}

/** `n` as BCS's ULEB128 length. */
export const uleb = (n: number) => {
  const out: number[] = []
  do {
    out.push((n & 0x7f) | (n >>> 7 ? 0x80 : 0))
    n >>>= 7
  } while (n)
  return new Uint8Array(out)
}
