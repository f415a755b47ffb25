import { bytesToHex } from '@noble/hashes/utils.js'

let lastMs = -1
let sequence = 0

/** Random bytes drawn 4 KiB at a time (one system call per 680 ids instead of one each). */
const pool = new Uint8Array(4096)
let used = pool.length
function randomHex(length: number): string {
  if (used + length > pool.length) {
    globalThis.crypto.getRandomValues(pool)
    used = 0
  }
  const hex = bytesToHex(pool.subarray(used, used + length))
  used += length
  return hex
}

/**
 * A UUIDv7-shaped id whose text sorts in creation order (time, then a per-millisecond sequence),
 * so "objects before/after this id" cursors are plain string comparisons.
 */
export function newId(nowMs: number): string {
  const ms = Math.max(Math.floor(nowMs), lastMs)
  sequence = ms === lastMs ? sequence + 1 : 0
  lastMs = ms
  const time = ms.toString(16).padStart(12, '0').slice(-12)
  // High sequence bits after the version nibble, low bits in the variant group: 2^26 ids per
  // millisecond keep their order as text.
  const high = ((sequence >> 14) & 0xfff).toString(16).padStart(3, '0')
  const low = (0x8000 | (sequence & 0x3fff)).toString(16)
  const random = randomHex(6)
  return `${time.slice(0, 8)}-${time.slice(8)}-7${high}-${low}-${random}`
}

/** `{ seconds, nanos }` of an epoch-milliseconds time, as resources carry it. */
export function timestampOf(ms: number): { seconds: string; nanos: string } {
  const seconds = Math.floor(ms / 1000)
  return { seconds: String(seconds), nanos: String((ms - seconds * 1000) * 1_000_000) }
}
