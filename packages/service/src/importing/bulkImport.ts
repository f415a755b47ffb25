// Node only (not loaded by the wing): the client side of a bulk import. Reads a JSONL file line by
// line, checks each line as the service will (so a bad line is reported with its number and never
// sent), encrypts plaintext mnemonics and keys to the organization's import key (allowed only in a
// file nobody but its owner can read), and submits `latchkey_import_user` with bounded concurrency
// and an optional rate. Lines are read a hundred at a time and their external ids asked about first
// (`alreadyImported`): a rerun skips what is done before encrypting or stamping anything. Memory
// stays flat: at most a hundred lines wait and `concurrency` are in flight, and the external ids
// already seen are kept as 16-byte hashes.
import { createECDH } from 'node:crypto'
import { createReadStream, statSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { type ImportUserParams, MAX_IMPORTED_USERS_QUERY } from '@latchkey/protocol'
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
  /**
   * Which of these external ids (at most `IMPORTED_BATCH`) are imported already
   * (`latchkey_get_imported_users`): those lines are counted as skipped and never sent. Undefined
   * when the service cannot tell (an older one): every line is then sent, and the service skips
   * what is done. A throw is retried like a submission. Without it, every line is sent.
   */
  alreadyImported?: (externalIds: string[]) => Promise<Set<string> | undefined>
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

/** The longest external id (`readImportUser`'s bound). */
const MAX_EXTERNAL_ID = 256

/** Lines read ahead and asked about at once (`alreadyImported`): the query's maximum. */
export const IMPORTED_BATCH = MAX_IMPORTED_USERS_QUERY

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

/** One line as read: its JSON (or why it is not), and its external id if it names one. */
interface ReadAhead {
  line: number
  value?: Record<string, unknown>
  error?: string
  externalId?: string
}

/**
 * Why a line is not JSON, in words that hold none of it. V8 quotes the text around the fault
 * (`Unexpected token ''', ..."mnemonic":'legal win"... is not valid JSON`), and a line may hold a
 * plaintext mnemonic or key, while the reason goes to the log and the `--rejected` file: such a
 * message is replaced by where the fault is, when V8 says.
 */
function notJson(error: unknown): string {
  const message = error instanceof Error ? error.message : ''
  if (!message.includes('"') && !message.startsWith('Unexpected token')) return `not JSON: ${message}`
  const position = / at position (\d+)/.exec(message)?.[1]
  return `not JSON: an unexpected character${position !== undefined ? ` at position ${position}` : ''}`
}

/** Parses one line enough to know its external id; the rest is checked when it is sent. */
function peek(line: number, text: string): ReadAhead {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return { line, error: notJson(error) }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { line, error: 'not a JSON object' }
  const externalId = (value as Record<string, unknown>).externalId
  return {
    line,
    value: value as Record<string, unknown>,
    ...(typeof externalId === 'string' ? { externalId } : {}),
  }
}

/** Reads one parsed line into the service's parameters, or says why not. */
async function readLine(
  value: Record<string, unknown>,
  context: { allowed: boolean; key: () => Promise<Uint8Array> },
): Promise<ImportUserParams> {
  await encryptSecrets(value, context)
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

  // Which external ids are done, asked once per batch; undefined turns the asking off (the service
  // cannot tell), and a batch whose asking keeps failing is sent whole (the service skips).
  let asking = options.alreadyImported
  const doneAmong = async (externalIds: string[]): Promise<Set<string>> => {
    for (let attempt = 1; asking && externalIds.length > 0; attempt++) {
      try {
        const done = await asking(externalIds)
        if (done) return done
        asking = undefined
      } catch {
        if (attempt >= attempts) break
        await sleep(Math.min(5000, 100 * 2 ** attempt))
      }
    }
    return new Set()
  }
  const hashOf = (externalId: string) => bytesToHex(sha256(utf8ToBytes(externalId)).slice(0, 16))
  const duplicate = (line: number, externalId: string) =>
    reject({ line, externalId, reason: 'duplicate externalId: an earlier line has it' })

  /** Sends the batch's lines not done yet, in order; the others are counted as skipped. */
  const sendBatch = async (batch: ReadAhead[]) => {
    // Only ids the service could have imported (a longer or empty one is refused when it is read).
    const done = await doneAmong([
      ...new Set(
        batch.flatMap(({ externalId: id }) =>
          id !== undefined && id.length > 0 && id.length <= MAX_EXTERNAL_ID ? [id] : [],
        ),
      ),
    ])
    for (const entry of batch) {
      if (entry.externalId !== undefined && done.has(entry.externalId)) {
        const idHash = hashOf(entry.externalId)
        if (seen.has(idHash)) duplicate(entry.line, entry.externalId)
        else {
          seen.add(idHash)
          totals.skipped++
        }
        continue
      }
      let params: ImportUserParams
      try {
        if (entry.error !== undefined) throw new Error(entry.error)
        params = await readLine(entry.value!, context)
      } catch (error) {
        reject({ line: entry.line, reason: (error as Error).message })
        continue
      }
      const idHash = hashOf(params.externalId)
      if (seen.has(idHash)) {
        duplicate(entry.line, params.externalId)
        continue
      }
      seen.add(idHash)
      if (interval > 0) {
        const wait = nextStart - performance.now()
        if (wait > 0) await sleep(wait)
        nextStart = Math.max(nextStart, performance.now()) + interval
      }
      while (inFlight.size >= concurrency) await Promise.race(inFlight)
      const task: Promise<void> = importOne(entry.line, params).finally(() => inFlight.delete(task))
      inFlight.add(task)
    }
  }

  try {
    const lines = createInterface({
      input: createReadStream(options.file),
      crlfDelay: Number.POSITIVE_INFINITY,
    })
    let number = 0
    let batch: ReadAhead[] = []
    for await (const text of lines) {
      number++
      if (text.trim() === '') continue
      totals.read++
      batch.push(peek(number, text))
      if (batch.length >= IMPORTED_BATCH) {
        await sendBatch(batch)
        batch = []
      }
    }
    await sendBatch(batch)
    await Promise.all(inFlight)
  } finally {
    if (ticker) clearInterval(ticker)
  }
  const done = progress()
  options.onProgress?.(done)
  return done
}
