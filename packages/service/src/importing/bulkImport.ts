// Node only (not loaded by the wing): the client side of a bulk import. Reads a JSONL file line by
// line, checks each line as the service will (so a bad line is reported with its number and never
// sent), encrypts plaintext mnemonics and keys to the organization's import key (allowed only in a
// file nobody but its owner can read), and submits `latchkey_import_user` with bounded concurrency
// and an optional rate. Memory stays flat: at most `concurrency` lines are in flight, and the
// external ids already seen are kept as 16-byte hashes.
import { createECDH } from 'node:crypto'
import { createReadStream, statSync } from 'node:fs'
import { createInterface } from 'node:readline'
import type { ImportUserParams } from '@latchkey/protocol'
import { hpkeSeal } from '@latchkey/protocol/hpke'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { ServiceError } from '../kernel/base/errors.ts'
import { Reader } from '../kernel/Reader.ts'
import { readImportUser } from './readImportUser.ts'

/** What the service answered for one user. */
export interface ImportAnswer {
  ok: boolean
  skipped?: boolean
  subOrganizationId?: string
  /** The service's message when refused. */
  reason?: string
  /** A refusal that a rerun may get past (429, 5xx, a network error): not the line's fault. */
  retry?: boolean
}

export interface Rejection {
  line: number
  externalId?: string
  reason: string
}

export interface ImportProgress {
  read: number
  imported: number
  skipped: number
  rejected: number
  elapsedMs: number
  /** Users imported per minute so far. */
  perMinute: number
}

export interface BulkImportOptions {
  /** The JSONL file, one user a line. */
  file: string
  /** Submits one user (`latchkey_import_user`) and says what happened. */
  submit: (params: ImportUserParams) => Promise<ImportAnswer>
  /** The organization's import key (uncompressed P-256), asked for once if some line has plaintext secrets. */
  importKey: () => Promise<Uint8Array>
  /** Users in flight at once. @default 4 */
  concurrency?: number
  /** At most this many users a second (a maintenance window's budget). @default unlimited */
  ratePerSecond?: number
  /** Attempts per user when the service is busy or unreachable. @default 5 */
  attempts?: number
  onProgress?: (progress: ImportProgress) => void
  onRejected?: (rejection: Rejection) => void
  /** How often `onProgress` is called. @default 1000 */
  progressEveryMs?: number
}

/** A secret's plaintext fields, taken from a file only its owner can read. */
const PLAINTEXT = { wallets: 'mnemonic', privateKeys: 'privateKey' } as const

/** HPKE's ephemeral key and ECDH by OpenSSL: some 20 times faster than in JS, once per secret. */
function nativeAgree(receiverPublicKey: Uint8Array): { enc: Uint8Array; dh: Uint8Array } {
  const ecdh = createECDH('prime256v1')
  const enc = new Uint8Array(ecdh.generateKeys())
  return { enc, dh: new Uint8Array(ecdh.computeSecret(receiverPublicKey)) }
}

/** True when `file` can be read by nobody but its owner (mode 0600 or 0400). */
export function ownerOnly(file: string): boolean {
  return (statSync(file).mode & 0o077) === 0
}

/**
 * The line's plaintext secrets encrypted to the import key, in place of `mnemonic`/`privateKey`:
 * the service, its activity records and the wire only ever see ciphertext.
 */
async function encryptSecrets(
  value: Record<string, unknown>,
  context: { allowed: boolean; key: () => Promise<Uint8Array> },
): Promise<void> {
  for (const [list, field] of Object.entries(PLAINTEXT)) {
    const items = value[list]
    if (!Array.isArray(items)) continue
    for (const [index, item] of items.entries()) {
      if (typeof item !== 'object' || item === null || !(field in item)) continue
      const secret = (item as Record<string, unknown>)[field]
      const where = `${list}[${index}].${field}`
      if (!context.allowed)
        throw new Error(
          `${where}: plaintext secrets are read only from a file nobody but its owner can read (chmod 600)`,
        )
      if (typeof secret !== 'string' || secret.length === 0)
        throw new Error(`${where} must be a non-empty string`)
      let plaintext: Uint8Array
      if (field === 'mnemonic') plaintext = utf8ToBytes(secret.trim().split(/\s+/).join(' '))
      else if (/^(0x)?[0-9a-fA-F]{64}$/.test(secret)) plaintext = hexToBytes(secret.replace(/^0x/, ''))
      else throw new Error(`${where} must be 32 bytes of hex`)
      const sealed = hpkeSeal({ plaintext, receiverPublicKey: await context.key(), agree: nativeAgree })
      plaintext.fill(0)
      const { [field]: _secret, ...rest } = item as Record<string, unknown>
      items[index] = { ...rest, encryptedBundle: JSON.stringify(sealed) }
    }
  }
}

/** Reads one line into the service's parameters, or says why not. */
async function readLine(
  text: string,
  context: { allowed: boolean; key: () => Promise<Uint8Array> },
): Promise<ImportUserParams> {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new Error(`not JSON: ${(error as Error).message}`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error('not a JSON object')
  await encryptSecrets(value as Record<string, unknown>, context)
  try {
    return readImportUser(new Reader(value, ''))
  } catch (error) {
    if (error instanceof ServiceError) throw new Error(error.message)
    throw error
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Imports every line of `options.file`. Resolves with the totals once every line is imported,
 * skipped (imported before) or rejected (reported through `onRejected` with its line number).
 */
export async function bulkImport(options: BulkImportOptions): Promise<ImportProgress> {
  const concurrency = Math.max(1, options.concurrency ?? 4)
  const attempts = Math.max(1, options.attempts ?? 5)
  const started = performance.now()
  const totals = { read: 0, imported: 0, skipped: 0, rejected: 0 }
  const progress = (): ImportProgress => {
    const elapsedMs = performance.now() - started
    return { ...totals, elapsedMs, perMinute: elapsedMs > 0 ? (totals.imported * 60_000) / elapsedMs : 0 }
  }
  const reject = (rejection: Rejection) => {
    totals.rejected++
    options.onRejected?.(rejection)
  }
  let key: Promise<Uint8Array> | undefined
  const context = { allowed: ownerOnly(options.file), key: () => (key ??= options.importKey()) }
  const seen = new Set<string>()
  const inFlight = new Set<Promise<void>>()
  const interval = options.ratePerSecond ? 1000 / options.ratePerSecond : 0
  let nextStart = performance.now()
  const ticker = options.onProgress
    ? setInterval(() => options.onProgress?.(progress()), options.progressEveryMs ?? 1000)
    : undefined

  const importOne = async (line: number, params: ImportUserParams) => {
    for (let attempt = 1; ; attempt++) {
      let answer: ImportAnswer
      try {
        answer = await options.submit(params)
      } catch (error) {
        answer = { ok: false, retry: true, reason: (error as Error).message }
      }
      if (answer.ok) {
        if (answer.skipped) totals.skipped++
        else totals.imported++
        return
      }
      if (!answer.retry || attempt >= attempts) {
        reject({ line, externalId: params.externalId, reason: answer.reason ?? 'refused' })
        return
      }
      await sleep(Math.min(5000, 100 * 2 ** attempt))
    }
  }

  try {
    const lines = createInterface({
      input: createReadStream(options.file),
      crlfDelay: Number.POSITIVE_INFINITY,
    })
    let number = 0
    for await (const text of lines) {
      number++
      if (text.trim() === '') continue
      totals.read++
      let params: ImportUserParams
      try {
        params = await readLine(text, context)
      } catch (error) {
        reject({ line: number, reason: (error as Error).message })
        continue
      }
      const idHash = bytesToHex(sha256(utf8ToBytes(params.externalId)).slice(0, 16))
      if (seen.has(idHash)) {
        reject({
          line: number,
          externalId: params.externalId,
          reason: 'duplicate externalId: an earlier line has it',
        })
        continue
      }
      seen.add(idHash)
      if (interval > 0) {
        const wait = nextStart - performance.now()
        if (wait > 0) await sleep(wait)
        nextStart = Math.max(nextStart, performance.now()) + interval
      }
      while (inFlight.size >= concurrency) await Promise.race(inFlight)
      const task: Promise<void> = importOne(number, params).finally(() => inFlight.delete(task))
      inFlight.add(task)
    }
    await Promise.all(inFlight)
  } finally {
    if (ticker) clearInterval(ticker)
  }
  const done = progress()
  options.onProgress?.(done)
  return done
}
