// Node only: the durable stores (a data dir's SQLite file, PostgreSQL) and the master key; imported
// by the CLI and Node tests, never by createService (which must also run in a browser).
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
  rmSync,
  unlinkSync,
  writeSync,
} from 'node:fs'
import { dirname, join } from 'node:path'
import { Kysely } from 'kysely'
import pg from 'pg'
import { postgresBackend } from './backends/postgresBackend.ts'
import { sqliteBackend } from './backends/sqliteBackend.ts'
import type { Database } from './Database.ts'
import { preparedPostgresDialect } from './postgresDialect.ts'
import { Store } from './Store.ts'
import { syncSqliteDialect } from './sqlite.ts'
import { wasmSqlite } from './wasmSqlite.ts'

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

/** What the 0.1 releases kept in a data dir (an NDJSON journal over a JSON snapshot). */
const OLD_FORMAT = ['journal.ndjson', 'snapshot.json']

/** The SQLite file of a data dir. */
export const DATABASE_FILE = 'latchkey.sqlite'

/**
 * The SQLite store under `dir`: one file, `latchkey.sqlite`, in WAL mode with `synchronous=FULL`
 * (a commit is fsynced before it is acknowledged) and exclusive locking (one process per data
 * dir; a second one is refused with a message naming the holder). Files are created 0600 in a
 * 0700 directory (an existing directory and files are tightened on start). A data dir of the 0.1
 * journal format is refused, untouched, with what to do.
 */
export async function openDataDir(dir: string): Promise<Store> {
  const databasePath = join(dir, DATABASE_FILE)
  const old = OLD_FORMAT.filter((file) => existsSync(join(dir, file)))
  if (old.length > 0 && !existsSync(databasePath))
    throw new Error(
      `${dir} holds data in the journal format of latchkey-service 0.1 (${old.join(', ')}), which this version does not read. ` +
        'Nothing was changed. Start 0.1 on it and export what you need, or move it aside and start with an empty --data-dir.',
    )
  privateDir(dir, [databasePath, `${databasePath}-wal`, join(dir, 'LOCK'), join(dir, 'master.key')])
  const lockPath = join(dir, 'LOCK')
  if (existsSync(lockPath)) {
    const pid = Number(readFileSync(lockPath, 'utf8').trim())
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid))
      throw new Error(`${dir} is in use by process ${pid}; stop it or pick another --data-dir`)
  }
  writeFileDurably(lockPath, String(process.pid))
  fsyncDir(dir)
  // We hold the data dir: a lock directory SQLite's VFS left behind when a process died is stale.
  rmSync(`${databasePath}.lock`, { recursive: true, force: true })
  // Files SQLite creates (the WAL) are the owner's only.
  process.umask(0o077)
  const releaseLock = () => {
    try {
      if (readFileSync(lockPath, 'utf8').trim() === String(process.pid)) unlinkSync(lockPath)
    } catch {}
  }
  let database: ReturnType<typeof wasmSqlite>
  try {
    if (!existsSync(databasePath)) closeSync(openSync(databasePath, 'wx', FILE_MODE))
    database = wasmSqlite(databasePath)
    database.exec('PRAGMA locking_mode = EXCLUSIVE')
    database.exec('PRAGMA journal_mode = WAL')
    database.exec('PRAGMA synchronous = FULL')
    database.exec('PRAGMA foreign_keys = ON')
  } catch (error) {
    releaseLock()
    throw new Error(`cannot open ${databasePath}: ${(error as Error).message}`, { cause: error })
  }
  const db = new Kysely<Database>({ dialect: syncSqliteDialect(database) })
  try {
    return await Store.open(db, sqliteBackend, async () => {
      await db.destroy()
      releaseLock()
    })
  } catch (error) {
    await db.destroy().catch(() => undefined)
    releaseLock()
    throw error
  }
}

/**
 * The store on PostgreSQL: a connection pool (`max` connections) on `url`. Several service
 * processes may share one database; every transaction is SERIALIZABLE (see `Store.transaction`).
 * A database that is down answers requests with 503 `STORAGE_UNAVAILABLE`, and the pool
 * reconnects when it is back.
 */
export async function openPostgres(url: string, options: { max?: number } = {}): Promise<Store> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: 3_000,
    idleTimeoutMillis: 30_000,
    // A statement stuck on a dead server fails instead of holding the request forever.
    query_timeout: 15_000,
  })
  // A connection that breaks (the server restarted) fails only the query on it: an idle one is
  // dropped by the pool, a busy one rejects its query (503), and the next query reconnects.
  pool.on('error', () => undefined)
  pool.on('connect', (client) => client.on('error', () => undefined))
  const db = new Kysely<Database>({ dialect: preparedPostgresDialect(pool) })
  try {
    return await Store.open(db, postgresBackend)
  } catch (error) {
    await db.destroy().catch(() => undefined)
    throw error
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
  return loadMasterKeyFile(join(dir, 'master.key'), env)
}

/**
 * The master key from env `LATCHKEY_MASTER_KEY` (64 hex chars), else from `path` (created with
 * mode 0600 in a 0700 directory when missing). Every instance on one database needs the same key.
 */
export function loadMasterKeyFile(
  path: string,
  env: string | undefined = process.env.LATCHKEY_MASTER_KEY,
): Uint8Array {
  if (env !== undefined) {
    if (!/^[0-9a-fA-F]{64}$/.test(env.trim()))
      throw new Error('LATCHKEY_MASTER_KEY must be 64 hex characters')
    return Uint8Array.from(Buffer.from(env.trim(), 'hex'))
  }
  const dir = dirname(path)
  privateDir(dir, [path])
  if (!existsSync(path)) {
    writeFileDurably(path, randomBytes(32).toString('hex'))
    fsyncDir(dir)
  }
  const text = readFileSync(path, 'utf8').trim()
  if (!/^[0-9a-f]{64}$/i.test(text)) throw new Error(`${path} is not a 64-hex-character key`)
  return Uint8Array.from(Buffer.from(text, 'hex'))
}
