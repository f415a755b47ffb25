import { sql } from 'kysely'
import type { StoreBackend } from './StoreBackend.ts'

const CONNECTION_CODES = ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']
const CONNECTION_LOST =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable/i

/**
 * PostgreSQL (`pg`): several service processes may write one database, so nothing committed is
 * cached and every transaction is SERIALIZABLE, rerun on conflicts. Each read is a round trip, so
 * a request's first reads are read ahead in one statement, and an activity that only adds its own
 * record runs on those reads with its rows inserted by one more statement (`writesAtOnce`); the
 * reads and inserts of concurrent requests share those statements (`batchesRequests`).
 */
export const postgresBackend: StoreBackend = {
  name: 'PostgreSQL',
  textType: sql`text collate "C"`,
  classify(error) {
    const e = error as { code?: unknown; message?: unknown } | null
    const code = typeof e?.code === 'string' ? e.code : ''
    const message = typeof e?.message === 'string' ? e.message : ''
    // 25P02: an earlier statement of this transaction failed (a conflict caught somewhere): rerun it.
    if (code === '40001' || code === '40P01' || code === '25P02') return 'retry'
    if (code === '23505') return 'unique'
    // 08: connection, 53: insufficient resources, 57P: shutdown, 58: system error.
    if (/^(08|53|57P|58)/.test(code) || CONNECTION_CODES.includes(code) || CONNECTION_LOST.test(message))
      return 'unavailable'
    return 'other'
  },
  begin: 'begin isolation level serializable',
  maxAttempts: 30,
  groupsCommits: false,
  cachesReads: false,
  readsAhead: true,
  writesAtOnce: true,
  batchesRequests: true,
  checksReplayFirst: false,
  // PostgreSQL only warns on a `begin` inside a transaction.
  stillInTransaction: () => false,
}
