/**
 * `length` decimal digits from the platform CSPRNG, each uniform: bytes >= 250 are drawn again
 * so `byte % 10` has no bias.
 */
export function randomDigits(length: number, fill: (bytes: Uint8Array) => Uint8Array = defaultFill): string {
  let out = ''
  while (out.length < length) {
    const bytes = fill(new Uint8Array(length * 2))
    for (const byte of bytes) {
      if (byte >= 250) continue
      out += String(byte % 10)
      if (out.length === length) break
    }
  }
  return out
}

/** Crockford's base 32: digits and upper-case letters without I, L, O and U (no look-alikes). */
export const CROCKFORD_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

/**
 * `length` characters of `alphabet` (at most 256) from the platform CSPRNG, each uniform: bytes at
 * or above the largest multiple of its size are drawn again so `byte % size` has no bias.
 */
export function randomCode(
  length: number,
  alphabet: string,
  fill: (bytes: Uint8Array) => Uint8Array = defaultFill,
): string {
  const limit = 256 - (256 % alphabet.length)
  let out = ''
  while (out.length < length) {
    for (const byte of fill(new Uint8Array(length * 2))) {
      if (byte >= limit) continue
      out += alphabet[byte % alphabet.length]
      if (out.length === length) break
    }
  }
  return out
}

/**
 * A code as typed, in the form it was sent: upper case, and Crockford's look-alikes read as the
 * digits they stand for (O as 0, I and L as 1). Digits are left as they are.
 */
export function normalizeCode(code: string): string {
  return code.toUpperCase().replace(/O/g, '0').replace(/[IL]/g, '1')
}

const defaultFill = (bytes: Uint8Array) => crypto.getRandomValues(bytes)
