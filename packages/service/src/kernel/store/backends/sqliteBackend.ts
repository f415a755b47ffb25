import { sql } from 'kysely'
import { bucketStatements } from './bucketStatements.ts'
import type { StoreBackend } from './StoreBackend.ts'

const UNAVAILABLE =
  /database or disk is full|disk I\/O error|unable to open database|database is locked|attempt to write a readonly database|no transaction is active|cannot commit|SQLITE_FULL|SQLITE_IOERR/i

/**
 * SQLite (node-sqlite3-wasm in Node, sql.js in browsers; a data dir's file or in memory): one
 * connection and one writing process (a data dir is locked to one), so queued transactions commit
 * as a group and committed reads are cached. Its errors are told apart by their messages (the
 * drivers give no codes); a full disk or an I/O error is an outage, never a conflict to retry.
 */
export const sqliteBackend: StoreBackend = {
  name: 'SQLite',
  textType: sql`text`,
  classify(error) {
    const message = (error as { message?: unknown } | null)?.message
    return typeof message === 'string' && UNAVAILABLE.test(message) ? 'unavailable' : 'other'
  },
  begin: 'begin immediate',
  maxAttempts: 30,
  groupsCommits: true,
  cachesReads: true,
  // No round trips to save: reads go through the read cache as they are made, which measured
  // faster than reading ahead.
  readsAhead: false,
  // Group commit already shares a transaction's begin and commit among those that queued.
  writesAtOnce: false,
  batchesRequests: false,
  // One connection runs one transaction at a time: reading the fingerprint index conflicts with nobody.
  checksReplayFirst: true,
  stillInTransaction: (error) => /within a transaction/.test(String(error)),
  // Reads ahead and inserts at once nowhere, so no array statements.
  ...bucketStatements({
    number: (value) => sql<number>`cast(${value} as real)`,
    greater: (a, b) => sql<number>`max(${a}, ${b})`,
  }),
  // VACUUM rewrites the file without the free pages; the checkpoint empties the WAL of old pages.
  compact: ['VACUUM', 'PRAGMA wal_checkpoint(TRUNCATE)'],
  // One read transaction on the one connection: transactions queue behind it while it copies.
  copyInto: (file) => sql`VACUUM INTO ${file}`,
}
