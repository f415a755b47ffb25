import { CompiledQuery, type DatabaseConnection, type Kysely } from 'kysely'
import { nextTurn } from '../base/async.ts'
import type { StoreBackend } from './backends/StoreBackend.ts'
import type { Database } from './Database.ts'
import { classify } from './databaseErrors.ts'
import type { TableName } from './model.ts'
import type { Transaction } from './Transaction.ts'

/** Most transactions committed together. */
const GROUP_LIMIT = 64

interface Grouped {
  fn: (tx: Transaction) => unknown
  attempt: number
  /** When it was queued (`performance.now()`). */
  at: number
  resolve(value: unknown): void
  reject(error: unknown): void
}

/** What a group commit runs on, given by the store. */
export interface GroupCommitOptions {
  db: Kysely<Database>
  backend: StoreBackend
  /** A transaction on the group's connection, writing down the tables it writes in `written`. */
  transaction(connection: DatabaseConnection, attempt: number, written: Set<TableName>): Transaction
  /** The group wrote `tables` and committed (or rolled back): called while it holds the connection. */
  committed(tables: Set<TableName>): void
  /** Runs `run` as the store runs every database call (refused once closed, outages as 503). */
  guard<R>(run: () => Promise<R>): Promise<R>
  /** Told, for each transaction, how long it waited for its group and how long the group took, ms. */
  timed?(waited: number, took: number): void
}

/**
 * Group commit, for a backend whose one connection runs transactions one after the other anyway
 * (`StoreBackend.groupsCommits`): the ones that queued up meanwhile run as one database
 * transaction, one after the other, with one commit, so one fsync, for all of them. When a
 * function throws, the group is rolled back and each of its functions runs again in a transaction
 * of its own (a transaction's function may always be rerun: see `Store.transaction`), so a throw
 * undoes exactly its own writes. Nobody hears back before the commit that holds their writes: a
 * result is acknowledged only once it is durable, and when the database fails (a commit, or a
 * statement on a full disk), no function of the group is acknowledged and each gets the error.
 */
export class GroupCommit {
  /** Transactions waiting for the next group. */
  private readonly waiting: Grouped[] = []
  private committing = false
  /** Groups committed (or rolled back) so far, and the transactions they carried. */
  readonly counts = { batches: 0, items: 0 }

  constructor(private readonly options: GroupCommitOptions) {}

  /** Runs `fn` in the next group; resolves once the group that ran it has committed. */
  run<R>(fn: (tx: Transaction) => Promise<R> | R, attempt: number): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({
        fn: fn as Grouped['fn'],
        attempt,
        at: performance.now(),
        resolve: resolve as Grouped['resolve'],
        reject,
      })
      if (!this.committing) {
        this.committing = true
        nextTurn(() => void this.commitGroups())
      }
    })
  }

  /**
   * Each group starts a turn of the event loop after the first transaction queued (or after the
   * last group), so the transactions whose I/O completed meanwhile (their crypto job's answer, a
   * request's body) join it. The commit itself blocks the thread (the SQLite driver is
   * synchronous, and `synchronous = FULL` syncs the log each commit): a group that started in the
   * first one's microtasks would commit each transaction alone, one sync a request.
   */
  private async commitGroups(): Promise<void> {
    try {
      while (this.waiting.length > 0) {
        await this.commitGroup(this.waiting.splice(0, GROUP_LIMIT))
        await new Promise<void>((resolve) => nextTurn(resolve))
      }
    } finally {
      this.committing = false
    }
  }

  private async commitGroup(group: Grouped[]): Promise<void> {
    this.counts.batches++
    this.counts.items += group.length
    const started = performance.now()
    try {
      await this.runGroup(group)
    } finally {
      const took = performance.now() - started
      const { timed } = this.options
      if (timed) for (const item of group) timed(started - item.at, took)
    }
  }

  private async runGroup(group: Grouped[]): Promise<void> {
    const { db, backend, guard } = this.options
    const outcomes: ({ value: unknown } | { error: unknown })[] = []
    try {
      await guard(() =>
        db.getExecutor().provideConnection(async (connection) => {
          const run = (statement: string) => connection.executeQuery(CompiledQuery.raw(statement, []))
          try {
            await run(backend.begin)
          } catch (error) {
            // The connection can be left inside a transaction whose rollback failed (an I/O
            // error): end it, then begin again.
            if (!backend.stillInTransaction(error)) throw error
            await run('rollback')
            await run(backend.begin)
          }
          // The database failing (not a function) ends the whole group.
          const databaseFailed = (error: unknown) => classify(backend, error) !== 'other'
          const runAll = async (items: Grouped[], reruns: boolean) => {
            const written = new Set<TableName>()
            try {
              for (const item of items) {
                const attempt = reruns ? item.attempt + 1 : item.attempt
                const tx = this.options.transaction(connection, attempt, written)
                outcomes.push({ value: await item.fn(tx) })
              }
              await run('commit')
            } catch (error) {
              await run('rollback').catch(() => undefined)
              throw error
            } finally {
              // Still holding the connection: no read can slip in between the commit and this.
              this.options.committed(written)
            }
          }
          try {
            await runAll(group, false)
          } catch (error) {
            if (databaseFailed(error)) throw error
            outcomes.length = 0
            if (group.length === 1) {
              outcomes.push({ error })
              return
            }
            // A function threw: everyone again, alone.
            for (const item of group) {
              await run(backend.begin)
              try {
                await runAll([item], true)
              } catch (alone) {
                if (databaseFailed(alone)) throw alone
                outcomes.push({ error: alone })
              }
            }
          }
        }),
      )
    } catch (error) {
      for (const item of group) item.reject(error)
      return
    }
    group.forEach((item, index) => {
      const outcome = outcomes[index]!
      if ('error' in outcome) item.reject(outcome.error)
      else item.resolve(outcome.value)
    })
  }
}
