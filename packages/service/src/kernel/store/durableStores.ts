// Node only: the durable stores (a data dir's SQLite file, PostgreSQL) and the master key; imported
// by the CLI and Node tests, never by createService (which must also run in a browser).
import { randomBytes } from 'node:crypto'
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  constants as fsConstants,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { dirname, isAbsolute, join } from 'node:path'
import { Kysely } from 'kysely'
import pg from 'pg'
import { postgresBackend } from './backends/postgresBackend.ts'
import { sqliteBackend } from './backends/sqliteBackend.ts'
import type { Database } from './Database.ts'
import { LogSync } from './LogSync.ts'
import { type DataDirLock, lockDataDir } from './lockDataDir.ts'
import type { MigrateOptions } from './migrations.ts'
import { preparedPostgresDialect } from './postgresDialect.ts'
import { Store } from './Store.ts'
import { syncSqliteDialect } from './sqlite.ts'
import { wasmSqlite } from './wasmSqlite.ts'

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

/**
 * Creates `path` holding `text`, unless it exists: written under a name of its own (`O_EXCL`),
 * fsynced, then linked into place, which fails if another process created `path` first (a rename
 * would replace theirs). True if this call created it.
 */
function createFileDurably(path: string, text: string, mode = FILE_MODE): boolean {
  const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
  const fd = openSync(temp, 'wx', mode)
  try {
    try {
      writeSync(fd, text)
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    try {
      linkSync(temp, path)
      return true
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'EEXIST') return false
      // A file system without hard links: rename, refusing to replace a file that appeared.
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw error
      if (existsSync(path)) return false
      renameSync(temp, path)
      return true
    }
  } finally {
    rmSync(temp, { force: true })
  }
}

/** What the 0.1 releases kept in a data dir (an NDJSON journal over a JSON snapshot). */
const OLD_FORMAT = ['journal.ndjson', 'snapshot.json']

/** The SQLite file of a data dir. */
export const DATABASE_FILE = 'latchkey.sqlite'

export interface OpenDataDirOptions extends MigrateOptions {
  /**
   * The data dir's lock, when the caller took it before anything else (the CLI does, so that the
   * master key is created under it); released when the store closes. Taken here otherwise.
   */
  lock?: DataDirLock
  /**
   * Checks the database file before anything is written to it (SQLite's `quick_check`: every
   * page and index entry, without cross-checking indexes against tables), and refuses a damaged
   * one. It reads the whole file: skip it for a large file whose integrity is checked otherwise.
   * @default true
   */
  integrityCheck?: boolean
  /**
   * Largest database file the start checks: a larger one would hold the start for as long as
   * reading all of it takes, so it is opened unchecked, with one stderr line naming the file and
   * how to check it (a backup through `restore`, which checks, or `quick_check` on a copy).
   * @default INTEGRITY_CHECK_MAX_BYTES
   */
  integrityCheckMaxBytes?: number
}

/** Largest database file checked at every start by default (1 GiB). */
export const INTEGRITY_CHECK_MAX_BYTES = 1024 ** 3

/**
 * The SQLite store under `dir`: one file, `latchkey.sqlite`, in WAL mode; a commit is fsynced
 * before it is acknowledged, off the thread that serves requests (`synchronous=NORMAL` and
 * `LogSync`). One process per data dir (`lockDataDir`: a
 * second one is refused with a message naming the holder), taken before anything is created.
 * Files are created 0600 in a 0700 directory (an existing directory and files are tightened on
 * start). A data dir of the 0.1 journal format is refused, untouched, with what to do; a damaged
 * database file is refused, unwritten, naming it (`integrityCheck`).
 */
export async function openDataDir(dir: string, options: OpenDataDirOptions = {}): Promise<Store> {
  const databasePath = join(dir, DATABASE_FILE)
  const old = OLD_FORMAT.filter((file) => existsSync(join(dir, file)))
  if (old.length > 0 && !existsSync(databasePath)) {
    await options.lock?.release()
    throw new Error(
      `${dir} holds data in the journal format of latchkey-service 0.1 (${old.join(', ')}), which this version does not read. ` +
        'Nothing was changed. Start 0.1 on it and export what you need, or move it aside and start with an empty --data-dir.',
    )
  }
  const held = options.lock ?? (await lockDataDir(dir))
  const lockFile = join(dir, 'LOCK')
  const lock = {
    release: async () => {
      try {
        if (readFileSync(lockFile, 'utf8').trim() === String(process.pid)) rmSync(lockFile)
      } catch {}
      await held.release()
    },
  }
  let database: ReturnType<typeof wasmSqlite> | undefined
  try {
    privateDir(dir, [databasePath, `${databasePath}-wal`, lockFile, join(dir, 'master.key')])
    // For whoever looks: the pid holding the data dir. Only the lock decides; whatever an earlier
    // holder left here is overwritten.
    writeFileSync(lockFile, `${process.pid}\n`, { mode: FILE_MODE })
    // We hold the data dir: a lock directory SQLite's VFS left behind when a process died is stale.
    rmSync(`${databasePath}.lock`, { recursive: true, force: true })
    // Files SQLite creates (the WAL) are the owner's only.
    process.umask(0o077)
    try {
      if (!existsSync(databasePath)) closeSync(openSync(databasePath, 'wx', FILE_MODE))
      database = wasmSqlite(databasePath)
      database.exec('PRAGMA locking_mode = EXCLUSIVE')
    } catch (error) {
      throw new Error(`cannot open ${databasePath}: ${(error as Error).message}`, { cause: error })
    }
    if (options.integrityCheck ?? true) {
      const size = statSync(databasePath).size
      const limit = options.integrityCheckMaxBytes ?? INTEGRITY_CHECK_MAX_BYTES
      if (size <= limit) checkIntegrity(database, databasePath)
      else
        process.stderr.write(
          `latchkey-service: ${databasePath} is ${size} bytes, over the ${limit} bytes checked at start; opened without quick_check. ` +
            'Check it offline: back it up and restore the backup (restore checks it), or run PRAGMA quick_check on a copy.\n',
        )
    }
    try {
      database.exec('PRAGMA journal_mode = WAL')
      // The log is synced off the thread, before each commit is answered (`LogSync`).
      database.exec('PRAGMA synchronous = NORMAL')
      database.exec('PRAGMA foreign_keys = ON')
    } catch (error) {
      throw new Error(`cannot open ${databasePath}: ${(error as Error).message}`, { cause: error })
    }
  } catch (error) {
    try {
      database?.close()
    } catch {}
    await lock.release()
    throw error
  }
  const db = new Kysely<Database>({ dialect: syncSqliteDialect(database) })
  const log = LogSync.ofDatabase(databasePath)
  try {
    const store = await Store.open(
      db,
      sqliteBackend,
      async () => {
        await log.release()
        await db.destroy()
        await lock.release()
      },
      { migrate: options.migrate ?? true },
    )
    store.syncsLog(log)
    // What opening committed (a migration) is on disk before anything is served.
    log.committed()
    await store.settled()
    // `latchkey-service backup` asks the process holding the data dir for a copy.
    await held.serve?.(async (request) => {
      const match = /^backup (".*")$/.exec(request)
      if (!match) throw new Error('unknown request')
      await backupDatabase(store, JSON.parse(match[1]!) as string)
      return 'ok'
    })
    return store
  } catch (error) {
    await log.release().catch(() => undefined)
    await db.destroy().catch(() => undefined)
    await lock.release()
    throw error
  }
}

/**
 * Copies a data dir's database into the new file `to` (an absolute path), as of one instant:
 * SQLite's `VACUUM INTO`, one read transaction on the store's connection, so transactions queue
 * behind it for as long as the copy takes and nothing is locked out for longer. Every commit
 * acknowledged before it began is in the copy. Never replaces a file and never writes through a
 * symlink: the copy is made in a new directory of this process's own beside `to` and then linked
 * to `to`, which fails if anything is there (a dangling symlink too).
 */
export async function backupDatabase(store: Store, to: string): Promise<void> {
  if (!store.backend.copyInto)
    throw new Error(`backupDatabase copies a data dir; use pg_dump for ${store.backend.name}`)
  if (!isAbsolute(to)) throw new Error(`the backup file must be an absolute path, got ${to}`)
  refuseExisting(to)
  const scratch = mkdtempSync(join(dirname(to), '.latchkey-backup-'))
  try {
    const copy = join(scratch, 'backup')
    await store.copyInto(copy)
    createExclusively(copy, to)
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

/** Throws when anything is at `path`, a symlink (dangling or not) included. */
export function refuseExisting(path: string): void {
  if (lstatSync(path, { throwIfNoEntry: false }))
    throw new Error(`${path} exists; a backup never replaces a file (nor writes through a symlink)`)
}

/**
 * Gives the file `from` the new name `to` without following a symlink at `to` or replacing
 * anything there: a hard link (which fails with EEXIST on anything, a dangling symlink included),
 * or where the file system has none, a copy opened with O_CREAT | O_EXCL (which fails the same way).
 */
function createExclusively(from: string, to: string): void {
  try {
    linkSync(from, to)
    return
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') refuseExisting(to)
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV') throw error
  }
  copyFileSync(from, to, fsConstants.COPYFILE_EXCL)
}

/**
 * Checks a database file nobody holds (a backup) with SQLite's `quick_check`, read-only; throws
 * naming what is wrong.
 */
export function checkDatabaseFile(path: string): void {
  let database: ReturnType<typeof wasmSqlite> | undefined
  try {
    database = wasmSqlite(path, { readOnly: true })
    checkIntegrity(database, path)
  } finally {
    database?.close()
  }
}

/** Most problems `quick_check` lists before it stops (the first few say enough). */
const INTEGRITY_PROBLEMS = 5

/** Refuses a damaged database file before anything is written to it. */
function checkIntegrity(database: ReturnType<typeof wasmSqlite>, path: string): void {
  let problems: string[]
  try {
    const check = database.prepare(`PRAGMA quick_check(${INTEGRITY_PROBLEMS})`)
    try {
      problems = check
        .all([])
        .flatMap((row) => String(Object.values(row)[0]).split('\n'))
        .map((line) => line.trim())
        .filter((line) => line !== 'ok' && line !== '' && !line.startsWith('***'))
    } finally {
      check.finalize?.()
    }
  } catch (error) {
    problems = [(error as Error).message]
  }
  if (problems.length > 0)
    throw new Error(
      `${path} is damaged (${problems.join('; ')}). Nothing was written to it. ` +
        'Stop every process using it and restore the data dir from a backup.',
    )
}

/**
 * What the store asks of the server for each of its connections, so that no stuck or vanished
 * client holds what another waits for: an organization's spend lock above all, which its every
 * limited signing, on every instance, waits for.
 *
 * - A connection the pool dropped (a statement past `query_timeout`) leaves its backend running
 *   what it was sent: one waiting for a lock another session holds would wait, holding a
 *   connection slot, until the holder lets go, and each request after it would leave another,
 *   until the database refuses every connection. `client_connection_check_interval` makes the
 *   backend poll its socket each second while it runs a statement, notice the client has gone and
 *   end.
 * - A connection whose instance's host died (power lost, cut off: nothing closes its TCP
 *   connection) ends within about 25 s rather than the operating system's 2 hours and more: the
 *   server probes it after 10 s of silence, every 5 s, and gives up after 3 unanswered.
 * - A connection whose process stopped while its host lives on (a frozen or suspended process,
 *   a debugger's breakpoint, a container paused: the host still answers the probes) ends after
 *   `stuckSessionMs` of silence, in a transaction (`idle_in_transaction_session_timeout`) or out
 *   of one (`idle_session_timeout`, where a lock group keeps its locks between groups for at most
 *   100 ms): its transaction rolls back and its locks are freed, so the organization's signings
 *   on the other instances go on. Nothing it signed is lost: a signature is answered only once its
 *   transaction committed. No transaction of the service waits on anything outside the database.
 *
 * One statement, sent before anything else on the connection. A setting the server does not
 * know (`client_connection_check_interval` and `idle_session_timeout` are PostgreSQL 14's) fails
 * it, and the connection runs without them; docs/storage.md asks for 14 or later.
 */
export function sessionSettings(stuckSessionMs: number): string {
  const settings: [string, string][] = [
    ['client_connection_check_interval', '1000'],
    ['tcp_keepalives_idle', '10'],
    ['tcp_keepalives_interval', '5'],
    ['tcp_keepalives_count', '3'],
    ['idle_in_transaction_session_timeout', String(stuckSessionMs)],
    ['idle_session_timeout', String(stuckSessionMs)],
  ]
  return `select ${settings.map(([name, value]) => `set_config('${name}', '${value}', false)`).join(', ')}`
}

/** How long opening a new connection to the server may take before it fails (503 `STORAGE_UNAVAILABLE`). */
const CONNECT_TIMEOUT_MS = 3_000

/**
 * pg's client, with its own bound on opening its connection (`CONNECT_TIMEOUT_MS`): the pool's
 * `connectionTimeoutMillis` bounds a checkout as a whole, the wait for a busy pool's next free
 * connection included, so the two need their own values.
 */
class BoundedClient extends pg.Client {
  constructor(config: pg.ClientConfig = {}) {
    super({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS })
  }
}

/**
 * The store on PostgreSQL: a connection pool (`max` connections) on `url`. Several service
 * processes may share one database; every transaction is SERIALIZABLE (see `Store.transaction`).
 * A database that is down answers requests with 503 `STORAGE_UNAVAILABLE`, and the pool
 * reconnects when it is back.
 */
export async function openPostgres(
  url: string,
  options: {
    max?: number
    /**
     * How long a statement may go unanswered before the request fails with 503
     * `STORAGE_UNAVAILABLE` and its connection is dropped (pg's `query_timeout`). @default 15000
     */
    queryTimeoutMs?: number
    /**
     * How long a request may wait for one of the pool's `max` connections while all are busy
     * before it fails with 503 `STORAGE_UNAVAILABLE`. A busy pool is not a database that is down
     * (a burst of requests on a loaded host queues for seconds; a lock group, one wait for up to
     * 64 signings, queues behind each request's own statements), so it waits as long as a
     * statement may; opening a connection is bounded apart (3 s). @default `queryTimeoutMs` (3 s at least)
     */
    connectionWaitMs?: number
    /**
     * How long the server lets one of the store's connections sit silent, in a transaction or
     * holding locks between them, before it ends the session and frees what it held
     * (`sessionSettings`). @default 30000
     */
    stuckSessionMs?: number
    /**
     * How long a chain of lock groups may keep its locks (`GroupCommit`'s `chainMs`). @default 100
     * (a test that holds a group open on purpose sets more)
     */
    lockChainMs?: number
  } & MigrateOptions = {},
): Promise<Store> {
  const stuckSessionMs = options.stuckSessionMs ?? 30_000
  const queryTimeoutMs = options.queryTimeoutMs ?? 15_000
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    // A new connection that does not open within 3 s fails (`BoundedClient`). The pool's own
    // bound covers the whole checkout, the wait for a free connection included: at 3 s, a burst
    // of 150 signings on a loaded 2-core host answered some 503 with nothing wrong (its lock
    // group queued behind every request's own transaction for a connection).
    Client: BoundedClient,
    connectionTimeoutMillis: Math.max(options.connectionWaitMs ?? queryTimeoutMs, CONNECT_TIMEOUT_MS),
    // The pool ends an idle connection before the server would (`idle_session_timeout`).
    idleTimeoutMillis: Math.max(1, Math.floor(stuckSessionMs / 2)),
    // A statement stuck on a dead or wedged server fails instead of holding the request forever.
    query_timeout: queryTimeoutMs,
    // A statement sent while others are on their way on the connection goes at once, not when
    // they are answered (pg's pipelining; the database still runs them in order, and one that
    // fails fails alone, or aborts its transaction as it would anyway). A lock group sends its
    // lock, begin and read ahead together, then its write and commit: it waits for two round
    // trips where it waited for five, on the path every signing under a spending limit takes
    // (issue 37, bench/README.md). pg@9 drops the queue that held them back instead.
    pipeline: true,
  })
  // A connection that breaks (the server restarted) fails only the query on it: an idle one is
  // dropped by the pool, a busy one rejects its query (503), and the next query reconnects.
  pool.on('error', () => undefined)
  pool.on('connect', (client) => {
    client.on('error', () => undefined)
    // Every statement is a named prepared one (`preparedPostgresDialect`) and an indexed lookup or
    // an insert: plan each once per connection. Left to choose, PostgreSQL plans the reads ahead,
    // whose parameters are arrays, again at every run (0.45 ms of a 0.5 ms statement, measured).
    // Sent before anything else on the connection; a server older than 12 (no such setting)
    // refuses it and plans as before.
    client.query('set plan_cache_mode = force_generic_plan').catch(() => undefined)
    client.query(sessionSettings(stuckSessionMs)).catch(() => undefined)
  })
  const db = new Kysely<Database>({ dialect: preparedPostgresDialect(pool) })
  try {
    const store = await Store.open(db, postgresBackend, () => db.destroy(), {
      migrate: options.migrate ?? true,
      ...(options.lockChainMs === undefined ? {} : { lockChainMs: options.lockChainMs }),
    })
    store.poolUse = () => ({
      total: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
      max: pool.options.max,
    })
    return store
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
  // The service's own folder: it and the key are the owner's only.
  if (env === undefined) privateDir(dir, [join(dir, 'master.key')])
  return loadMasterKeyFile(join(dir, 'master.key'), env)
}

/**
 * The master key from env `LATCHKEY_MASTER_KEY` (64 hex chars), else from `path` (created with
 * mode 0600 when missing, in a new 0700 folder when its folder is missing too). A key file that
 * exists is only read: neither its mode nor its folder's is changed (a secret mounted read-only,
 * a key kept in /etc, and never `/dev/…`). Every instance on one database needs the same key.
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
  if (!existsSync(path)) {
    mkdirSync(dir, { recursive: true, mode: DIR_MODE })
    // Created once, atomically: of several processes starting on one new file, all read the key
    // the first one wrote.
    if (createFileDurably(path, randomBytes(32).toString('hex'))) fsyncDir(dir)
  }
  const text = readFileSync(path, 'utf8').trim()
  if (!/^[0-9a-f]{64}$/i.test(text)) throw new Error(`${path} is not a 64-hex-character key`)
  return Uint8Array.from(Buffer.from(text, 'hex'))
}
