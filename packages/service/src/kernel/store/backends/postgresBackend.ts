import { type Expression, sql } from 'kysely'
import { bucketStatements } from './bucketStatements.ts'
import type { StoreBackend } from './StoreBackend.ts'

/** The `with` clause of the owners an insert found (`arrays.insertFromArrays`' `owners`), and its rows' owner column. */
const OWNERS = 'latchkey_owners'
const OWNER = 'latchkey_owner'

const CONNECTION_CODES = ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']
// pg's own errors for a connection it lost or gave up on: `Query read timeout` is a statement left
// unanswered past `query_timeout` (a wedged or overloaded server), after which pg drops the
// connection; `timeout expired`, a connection that did not open in time (`BoundedClient`); a
// 503 like the others, not a 500.
const CONNECTION_LOST =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|timeout expired|Client has encountered a connection error|not queryable|Query read timeout/i

/**
 * PostgreSQL (`pg`): several service processes may write one database, so nothing committed is
 * cached and every transaction is SERIALIZABLE (but those whose caller orders their writers with
 * advisory locks, at REPEATABLE READ: `beginSnapshot`), rerun on conflicts. Each read is a round trip, so
 * a request's first reads are read ahead in one statement, and an activity that only adds its own
 * record runs on those reads with its rows inserted by one more statement (`writesAtOnce`); the
 * reads and inserts of concurrent requests share those statements (`batchesRequests`). Both take
 * PostgreSQL's array parameters (`= any($1)`, `unnest`).
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
    // 08: connection, 28: the login refused (a password changed, the role may no longer log in),
    // 3D000: the database is gone, 53: insufficient resources, 57P: shutdown (57P05: the session
    // sat idle past `idle_session_timeout`), 58: system error, 25P03: the session sat idle in its
    // transaction past `idle_in_transaction_session_timeout` (its process was stopped:
    // `sessionSettings`), 42501: the role may no longer read or write a table (a grant revoked).
    // None is the request's doing: the service cannot reach its data until the operator acts.
    if (
      /^(08|28|3D000|53|57P|58|25P03|42501)/.test(code) ||
      CONNECTION_CODES.includes(code) ||
      CONNECTION_LOST.test(message)
    )
      return 'unavailable'
    return 'other'
  },
  begin: 'begin isolation level serializable',
  beginSnapshot: 'begin isolation level repeatable read',
  // One lock space: a session's lock and another session's transaction lock on one name exclude each other.
  sessionLocks: {
    // Taken in the array's order (a function scan's rows, each locked as it is read).
    lock: 'select pg_advisory_lock(hashtext(name)) from unnest($1::text[]) as name',
    unlock: 'select pg_advisory_unlock(hashtext(name)) from unnest($1::text[]) as name',
    inTransaction: 'select pg_advisory_xact_lock(hashtext($1))',
  },
  maxAttempts: 30,
  groupsCommits: false,
  cachesReads: false,
  readsAhead: true,
  writesAtOnce: true,
  batchesRequests: true,
  checksReplayFirst: false,
  arrays: {
    anyOf: (column, values) => sql<boolean>`${column} = any(${values})`,
    insertFromArrays(inserts, { replace = false, owners } = {}) {
      const insert = ({ table, columns, arrays, owners: ownerOf }: (typeof inserts)[number]) => {
        const names = sql.join(columns.map((name) => sql.ref(name)))
        const unnest = (more: Expression<unknown>[]) =>
          sql`unnest(${sql.join([...arrays, ...more].map((array) => sql`${array}::text[]`))})`
        // A row whose owner the `owners` update did not find (deleted) is left out.
        const rows =
          owners && ownerOf
            ? sql`insert into ${sql.table(table)} (${names}) select ${names} from ${unnest([ownerOf])} as ${sql.id('r')}(${names}, ${sql.id(OWNER)}) where ${sql.id(OWNER)} is null or ${sql.id(OWNER)} in (select ${sql.ref('id')} from ${sql.id(OWNERS)})`
            : sql`insert into ${sql.table(table)} (${names}) select * from ${unnest([])}`
        if (!replace) return rows
        const [id, ...rest] = columns
        return sql`${rows} on conflict (${sql.ref(id!)}) do update set ${sql.join(rest.map((name) => sql`${sql.ref(name)} = excluded.${sql.ref(name)}`))}`
      }
      if (owners) {
        // Each owner rewritten as it is (`id = id`: no index changes), locked until the commit;
        // one deleted by a committed transaction is not found (READ COMMITTED follows the row).
        // The owners are locked in id order first (the update alone locks them in the order its
        // scan meets them), so two instances' inserts sharing owners cannot deadlock.
        const locked = sql`select ${sql.ref('id')} from ${sql.table(owners.table)} where ${sql.ref('id')} = any(${owners.ids}::text[]) order by ${sql.ref('id')} for no key update`
        const found = sql`${sql.id(OWNERS)} as (update ${sql.table(owners.table)} set ${sql.ref('id')} = ${sql.ref('id')} where ${sql.ref('id')} in (${locked}) returning ${sql.ref('id')})`
        const withs = inserts.map((entry, k) => sql`${sql.id(`w${k}`)} as (${insert(entry)})`)
        return sql`with ${sql.join([found, ...withs])} select ${sql.ref('id')} from ${sql.id(OWNERS)}`
      }
      // Each insert but the last in a `with` clause: one statement, one snapshot, all or nothing.
      const last = inserts.length - 1
      const withs = inserts.slice(0, last).map((entry, k) => sql`${sql.id(`w${k}`)} as (${insert(entry)})`)
      return withs.length > 0
        ? sql`with ${sql.join(withs)} ${insert(inserts[last]!)}`
        : insert(inserts[last]!)
    },
  },
  ...bucketStatements({
    number: (value) => sql<number>`${value}::double precision`,
    greater: (a, b) => sql<number>`greatest(${a}, ${b})`,
  }),
  // The operator's VACUUM after a rotation, while instances serve (docs/operations.md).
  compact: [],
  // pg_dump (docs/operations.md).
  copyInto: undefined,
  // PostgreSQL only warns on a `begin` inside a transaction.
  stillInTransaction: () => false,
}
