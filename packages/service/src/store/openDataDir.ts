// Node only: imported by the CLI, never by createService (which must also run in a browser).
import { randomBytes } from 'node:crypto'
import {
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs'
import { join } from 'node:path'
import type { Op, Snapshot } from './model.ts'
import type { StorageBackend } from './Store.ts'

export interface FileBackendOptions {
  /**
   * Journal entries after which the state is folded into a new snapshot.
   * @default 1000
   */
  compactEvery?: number
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: alive but not ours.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function fsyncDir(dir: string): void {
  // Makes a rename durable. Some platforms refuse to open directories; the rename is then as
  // durable as the platform allows.
  try {
    const fd = openSync(dir, 'r')
    try {
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
  } catch {}
}

/** Data files (snapshot, journal, lock, master key) are readable by the owner only. */
const FILE_MODE = 0o600
/** The data directory is the owner's only. */
const DIR_MODE = 0o700

/** Creates `dir` (0700) or tightens an existing one, and tightens the files already in it. */
function privateDir(dir: string, files: string[]): void {
  mkdirSync(dir, { recursive: true, mode: DIR_MODE })
  chmodSync(dir, DIR_MODE)
  for (const file of files) if (existsSync(file)) chmodSync(file, FILE_MODE)
}

function writeFileDurably(path: string, text: string, mode = FILE_MODE): void {
  const temp = `${path}.tmp`
  const fd = openSync(temp, 'w', mode)
  try {
    // `mode` applies only when the file is created; a leftover temp file is tightened too.
    chmodSync(temp, mode)
    writeSync(fd, text)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  renameSync(temp, path)
}

/**
 * A durable store under `dir`: `snapshot.json` plus an fsynced append-only `journal.ndjson` of
 * commits. A commit is on disk before `append` returns; on start the journal is replayed over
 * the snapshot (a torn last line from a crash mid-write was never acknowledged and is dropped)
 * and folded into a fresh snapshot (temp file, fsync, rename). Files are 0600 in a 0700 directory
 * (an existing directory and files are tightened on start).
 */
export function fileBackend(dir: string, options: FileBackendOptions = {}): StorageBackend {
  const compactEvery = options.compactEvery ?? 1000
  const snapshotPath = join(dir, 'snapshot.json')
  const journalPath = join(dir, 'journal.ndjson')
  privateDir(dir, [snapshotPath, journalPath, join(dir, 'LOCK'), join(dir, 'master.key')])
  let fd: number | undefined
  let entries = 0

  const compact = (snapshot: Snapshot) => {
    writeFileDurably(snapshotPath, JSON.stringify(snapshot))
    fsyncDir(dir)
    // Replaying a journal over a snapshot that already holds it is harmless (ops are idempotent
    // puts and deletes), so a crash between the rename and this truncation loses nothing.
    if (fd !== undefined) closeSync(fd)
    fd = openSync(journalPath, 'w', FILE_MODE)
    fsyncSync(fd)
    entries = 0
  }

  // One process per data directory: two writers would interleave journals. A lock left by a
  // process that died (kill -9) is taken over.
  const lockPath = join(dir, 'LOCK')
  const lock = () => {
    if (existsSync(lockPath)) {
      const pid = Number(readFileSync(lockPath, 'utf8').trim())
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid))
        throw new Error(`${dir} is in use by process ${pid}; stop it or pick another --data-dir`)
    }
    writeFileDurably(lockPath, String(process.pid))
  }

  return {
    load() {
      lock()
      const snapshot: Record<string, Record<string, unknown>> = existsSync(snapshotPath)
        ? JSON.parse(readFileSync(snapshotPath, 'utf8'))
        : {}
      if (existsSync(journalPath)) {
        const lines = readFileSync(journalPath, 'utf8').split('\n')
        lines.forEach((line, index) => {
          if (!line) return
          let ops: Op[]
          try {
            ops = JSON.parse(line) as Op[]
          } catch (error) {
            if (index === lines.length - 1) return // torn final write: never acknowledged
            throw new Error(`${journalPath} line ${index + 1} is corrupt`, { cause: error })
          }
          for (const [table, id, row] of ops) {
            snapshot[table] ??= {}
            const rows = snapshot[table]
            if (row === null) delete rows[id]
            else rows[id] = row
          }
        })
      }
      compact(snapshot as Snapshot)
      return snapshot as Snapshot
    },
    append(ops) {
      if (fd === undefined) fd = openSync(journalPath, 'a', FILE_MODE)
      writeSync(fd, `${JSON.stringify(ops)}\n`)
      fsyncSync(fd)
      entries++
    },
    afterCommit(snapshot) {
      if (entries >= compactEvery) compact(snapshot())
    },
    close() {
      if (fd !== undefined) closeSync(fd)
      fd = undefined
      try {
        if (readFileSync(lockPath, 'utf8').trim() === String(process.pid)) unlinkSync(lockPath)
      } catch {}
    },
  }
}

/**
 * The 32-byte master key that seals secrets at rest, kept apart from the data: env
 * `LATCHKEY_MASTER_KEY` (64 hex chars) or `<dir>/master.key` (created with mode 0600).
 */
export function loadMasterKey(
  dir: string,
  env: string | undefined = process.env.LATCHKEY_MASTER_KEY,
): Uint8Array {
  if (env !== undefined) {
    if (!/^[0-9a-fA-F]{64}$/.test(env.trim()))
      throw new Error('LATCHKEY_MASTER_KEY must be 64 hex characters')
    return Uint8Array.from(Buffer.from(env.trim(), 'hex'))
  }
  const path = join(dir, 'master.key')
  privateDir(dir, [path])
  if (!existsSync(path)) {
    writeFileDurably(path, randomBytes(32).toString('hex'))
    fsyncDir(dir)
  }
  const text = readFileSync(path, 'utf8').trim()
  if (!/^[0-9a-f]{64}$/i.test(text)) throw new Error(`${path} is not a 64-hex-character key`)
  return Uint8Array.from(Buffer.from(text, 'hex'))
}
