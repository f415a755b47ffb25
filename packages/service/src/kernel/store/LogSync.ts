import { type FileHandle, open } from 'node:fs/promises'

/**
 * Makes what a SQLite data dir committed durable without the thread that serves requests waiting
 * for the disk (issue 42). SQLite runs in WAL mode with `synchronous = NORMAL`: a commit writes its
 * pages to the log (the WAL file) and returns, with no fsync; the store then asks `settled`, which
 * resolves once an fdatasync of the log, run on libuv's pool and begun after that commit, is done.
 * Nothing is acknowledged before then, so an acknowledged commit survives a power loss as it did
 * with `synchronous = FULL` (SQLite replays the log's committed frames at the next open; it syncs
 * the log itself before a checkpoint copies it into the database, and the database after).
 *
 * Syncs are shared: one runs at a time, and every commit made while it runs waits for the next
 * one, which starts when it ends. The store's group commit starts its next group only once the
 * sync of the last one ended (`GroupCommit`'s `between`), so one sync covers every transaction
 * that queued during the one before, as when the commit itself synced, while the thread serves
 * everything else (issue 42: a slow sync no longer stalls the service).
 *
 * A commit is visible to reads before its sync ends. What a reader does with it waits as well:
 * every HTTP answer waits for `settled` (`createService`), and the background work that acts
 * outside (a broadcast, a webhook delivery) first claims its row in a transaction of its own,
 * which is answered after a later sync, so nothing is told or sent of a commit a power loss could
 * still undo.
 *
 * A sync that fails leaves the log's state on disk unknown (Linux may have dropped the pages it
 * could not write): every later `settled` fails too, and the store answers 503 until restarted,
 * which replays the log as it is on disk.
 */
export class LogSync {
  /** Commits made so far. */
  private written = 0
  /** Of those, how many are known on disk. */
  private durable = 0
  /** The sync under way: the commits it covers (those made before it began) and its end. */
  private running: { covers: number; done: Promise<void> } | undefined
  /** Why a sync failed, once one did. */
  private failure: unknown

  constructor(
    /** Syncs the log file (an fdatasync on libuv's pool). */
    private readonly syncFile: () => Promise<void>,
    /** Closes what syncing kept open (the log's descriptor). */
    readonly release: () => Promise<void> = async () => undefined,
  ) {}

  /**
   * The log of the SQLite database at `path` (its `-wal` file), kept open: each sync is one
   * fdatasync on libuv's pool, one hop from the thread and back. SQLite never replaces the file
   * while it has the database open (after a checkpoint it writes the log again from its start, in
   * place), so the descriptor stays the log's until `release`.
   */
  static ofDatabase(path: string): LogSync {
    let file: Promise<FileHandle | undefined> | undefined
    return new LogSync(
      async () => {
        file ??= open(`${path}-wal`, 'r').catch((error: NodeJS.ErrnoException) => {
          file = undefined
          // No log yet: nothing was committed to one (SQLite removes it only after copying it all
          // into the database, and syncing that, at close).
          if (error.code === 'ENOENT') return undefined
          throw error
        })
        const handle = await file
        await handle?.datasync()
      },
      async () => {
        const handle = await file?.catch(() => undefined)
        file = undefined
        await handle?.close()
      },
    )
  }

  /** A commit was made: its pages are in the log, perhaps not yet on disk. */
  committed(): void {
    this.written++
  }

  /** Why the log could not be synced, once that happened (the store is unavailable from then on). */
  get failed(): unknown {
    return this.failure
  }

  /** Resolves once every commit made before the call is on disk; rejects once a sync has failed. */
  async settled(): Promise<void> {
    const target = this.written
    while (this.durable < target) {
      if (this.failure !== undefined) throw this.failure
      const running = this.running
      if (!running) this.start()
      else if (running.covers >= target) await running.done
      // Begun before the commit: it may not cover it. The next one, begun after it ends, does.
      else await running.done.catch(() => undefined)
    }
  }

  private start(): void {
    const covers = this.written
    const done = this.syncFile().then(
      () => {
        this.durable = Math.max(this.durable, covers)
      },
      (error: unknown) => {
        this.failure ??= error
        throw error
      },
    )
    const running = {
      covers,
      done: done.finally(() => {
        if (this.running === running) this.running = undefined
      }),
    }
    // Whoever waits for it sees a failure; the sync itself leaves none unhandled.
    running.done.catch(() => undefined)
    this.running = running
  }
}
