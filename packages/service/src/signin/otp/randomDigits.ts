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

const defaultFill = (bytes: Uint8Array) => crypto.getRandomValues(bytes)
