// Node only: Kysely's PostgreSQL dialect with a driver of ours over `pg`, so that the service's
// few query shapes run as named prepared statements.
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
} from 'kysely'
import type pg from 'pg'

/**
 * Every statement with parameters is sent as a named prepared statement: PostgreSQL parses and
 * plans it once per connection, and later runs skip straight to binding. The store only sends a
 * few dozen distinct statements (each query shape compiled once), so the names stay few. Statements
 * without parameters (begin, commit, savepoints, migrations) go as simple queries.
 */
export function preparedPostgresDialect(pool: pg.Pool): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new PreparedPostgresDriver(pool),
    createIntrospector: (db: Kysely<unknown>) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  }
}

/** Statement names by SQL text, the same on every connection of this process. */
const names = new Map<string, string>()
const nameOf = (sql: string) => {
  let name = names.get(sql)
  if (name === undefined) {
    name = `latchkey_${names.size + 1}`
    names.set(sql, name)
  }
  return name
}

class PreparedPostgresDriver implements Driver {
  private readonly connections = new WeakMap<pg.PoolClient, PreparedConnection>()
  private ended = false

  constructor(private readonly pool: pg.Pool) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const client = await this.pool.connect()
    let connection = this.connections.get(client)
    if (!connection) {
      connection = new PreparedConnection(client)
      this.connections.set(client, connection)
    }
    return connection
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery({ sql: 'begin', parameters: [] } as unknown as CompiledQuery)
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery({ sql: 'commit', parameters: [] } as unknown as CompiledQuery)
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery({ sql: 'rollback', parameters: [] } as unknown as CompiledQuery)
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    ;(connection as PreparedConnection).client.release()
  }

  async destroy(): Promise<void> {
    if (this.ended) return
    this.ended = true
    await this.pool.end()
  }
}

const WRITES = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE'])

/**
 * One connection. The statements sent on it in one stretch of synchronous code leave in one write
 * to the socket (a lock group's lock, `begin` and read ahead; its write, commit and unlock:
 * `GroupCommit`): the connection pipelines them (`openPostgres`), and its socket stays corked
 * until the stretch ends. Each write is a system call that, over loopback, also runs the kernel's
 * delivery to PostgreSQL on the service's thread (the writes were the largest single difference
 * between limited and unlimited signings in a profile of the throughput bench; what corking them
 * gave is within the bench's noise: issue 37, bench/README.md).
 */
class PreparedConnection implements DatabaseConnection {
  private corked = false

  constructor(readonly client: pg.PoolClient) {}

  /** Corks the socket until the code running now has run (`process.nextTick`), once per stretch. */
  private cork(): void {
    if (this.corked) return
    // A pool's client is a `pg.Client`, whose connection writes to this stream.
    const { stream } = (this.client as unknown as pg.Client).connection
    this.corked = true
    stream.cork()
    process.nextTick(() => {
      this.corked = false
      stream.uncork()
    })
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const values = query.parameters as unknown[]
    this.cork()
    const result =
      values.length === 0
        ? await this.client.query(query.sql)
        : await this.client.query({ name: nameOf(query.sql), text: query.sql, values })
    return {
      rows: (result.rows ?? []) as R[],
      ...(WRITES.has(result.command) ? { numAffectedRows: BigInt(result.rowCount ?? 0) } : {}),
    }
  }

  // biome-ignore lint/correctness/useYield: the store never streams; Kysely's interface asks for it
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported by this store')
  }
}
