export interface PostgresInstall {
  /** The folder holding initdb, postgres and psql (symlinks resolved). */
  binDir: string
  /** e.g. '15.18' */
  version: string
  /** How long apt-get took; 0 when PostgreSQL was already there. */
  installedMs: number
}

export interface PostgresCluster {
  host: '127.0.0.1'
  port: number
  database: string
  /** `postgres://postgres@127.0.0.1:<port>/<database>` (trust auth on loopback). */
  url: string
  dataDir: string
  binDir: string
  /** initdb + first start + CREATE DATABASE, in ms. */
  startMs: number
  /** Starts the server again on the same port with the same data (no-op while running). */
  start(): Promise<void>
  /** Fast shutdown (SIGINT): disconnects clients, checkpoints, waits for the exit. */
  stop(): Promise<void>
  /** Immediate shutdown (SIGQUIT): no checkpoint, crash recovery at the next start. */
  kill(): Promise<void>
  /** stop() then start(). */
  restart(): Promise<void>
  /** Runs SQL with psql as the superuser (for tests' inspection); returns psql's unaligned output. */
  psql(sql: string, database?: string): string
  /** The server's last log lines. */
  logs(): string
  /** Stops the server and removes its folder. */
  dispose(): Promise<void>
  /** Synchronous last-resort stop and removal (used by the process exit hook). */
  killNow(): void
}

/** Finds PostgreSQL's binaries, installing Debian's `postgresql` with apt-get when missing. */
export declare function ensurePostgres(): PostgresInstall
export declare function freePort(): Promise<number>
export declare function startPostgres(options?: {
  /** @default 'latchkey' */
  database?: string
  /** @default 200 */
  maxConnections?: number
  /** @default 30_000 */
  timeoutMs?: number
  /** @default on, off when env `LATCHKEY_PG_FSYNC=off` */
  fsync?: boolean
  log?: (line: string) => void
  /** Libraries loaded at start (`shared_preload_libraries`), e.g. `pg_stat_statements`. */
  preload?: string[]
}): Promise<PostgresCluster>
