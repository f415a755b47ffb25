import type { Runtime } from '../kernel/Runtime.ts'
import type { ServicePlugin } from '../kernel/registry.ts'

/** One look at what readiness depends on. */
export interface ReadinessReport {
  ready: boolean
  checks: {
    /** The database answered a trivial query within the timeout. */
    database: boolean
    /** Every migration this version knows is applied, and none it does not know. */
    migrations: boolean
    /** Every crypto worker thread is up. */
    crypto: boolean
    /** The service is not draining. */
    serving: boolean
    /** This instance holds the keyring's active master key (a rotation's restart did not miss it). */
    masterKey: boolean
  }
  /**
   * What the plugins add on the admin listener (`ServicePlugin.readiness`), by field: the sending
   * wing's `sponsors`, each sponsor account on each chain it pays on (address, last balance read
   * and whether it is below the operator's threshold). Informative only: never makes the service unready.
   */
  [detail: string]: unknown
}

export interface ReadinessOptions {
  /** How long the database may take to answer before it counts as down. @default 1000 */
  timeoutMs?: number
  /** How long one database look answers for (probes of both listeners share it). @default 1000 */
  cacheMs?: number
  /** The plugins asked for the admin report's details (`ServicePlugin.readiness`). @default none */
  plugins?: readonly ServicePlugin[]
}

/**
 * What `/readyz` answers: the database reachable and on this version's schema, the crypto workers
 * alive, and the service not draining. The database is asked at most once per `cacheMs` and never
 * waited on past `timeoutMs`, and a probe answers with the last look while the next is taken, so
 * it answers fast when the database is down and a burst of probes costs one query. Where the store has one connection (SQLite: a local file, no server to lose), a probe
 * would queue behind the writes and only report load, so the schema is checked once and the
 * database counts as reachable while the store is open.
 */
export class Readiness {
  private readonly timeoutMs: number
  private readonly cacheMs: number
  private readonly plugins: readonly ServicePlugin[]
  private last: { at: number; database: boolean; migrations: boolean } | undefined
  private pending: Promise<{ database: boolean; migrations: boolean }> | undefined

  constructor(
    private readonly runtime: Runtime,
    options: ReadinessOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 1000
    this.cacheMs = options.cacheMs ?? 1000
    this.plugins = options.plugins ?? []
  }

  /**
   * `details`: add what the plugins report (the admin listener's `/readyz`: the sponsors' balances;
   * the service's own port, which anyone can reach, does not tell its sponsors' owners and balances).
   */
  async check(options: { details?: boolean } = {}): Promise<ReadinessReport> {
    const { database, migrations } = await this.database()
    const checks = {
      database,
      migrations,
      crypto: this.runtime.crypto.alive?.() ?? true,
      serving: !this.runtime.lifecycle.draining,
      // A rotation made a master key active that this instance was not given: it seals nothing.
      masterKey: this.runtime.holdsActiveKey,
    }
    return { ready: Object.values(checks).every(Boolean), checks, ...(options.details ? this.details() : {}) }
  }

  /**
   * What every plugin adds to the admin report: never `ready` or `checks` (a plugin does not decide
   * readiness), and nothing from one that throws (a probe never fails on it).
   */
  private details(): Record<string, unknown> {
    const details: Record<string, unknown> = {}
    for (const plugin of this.plugins) {
      try {
        for (const [field, value] of Object.entries(plugin.readiness?.(this.runtime) ?? {}))
          if (field !== 'ready' && field !== 'checks') details[field] = value
      } catch {
        // Informative only: the probe answers without it.
      }
    }
    return details
  }

  /**
   * The last look at the database, taking a new one when it is older than `cacheMs`: a probe never
   * waits on it once there is a first (it answers with the last one while the next is taken), so a
   * probe answers within milliseconds whatever the database does. Only the first look is waited
   * for (bounded by `timeoutMs`); `createService` takes it at start.
   */
  database(): Promise<{ database: boolean; migrations: boolean }> {
    const last = this.last
    const oneConnection = this.runtime.store.backend.groupsCommits
    const fresh = last && ((oneConnection && last.database) || performance.now() - last.at < this.cacheMs)
    if (!fresh)
      this.pending ??= this.look().then((result) => {
        this.last = { at: performance.now(), ...result }
        this.pending = undefined
        return result
      })
    return last ? Promise.resolve(last) : this.pending!
  }

  private async look(): Promise<{ database: boolean; migrations: boolean }> {
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.timeoutMs)
    })
    // Node: a look in progress does not keep the process alive.
    ;(timer as { unref?: () => void } | undefined)?.unref?.()
    try {
      const state = await Promise.race([this.runtime.store.migrationState(), timeout])
      if (state === 'timeout') return { database: false, migrations: false }
      return { database: true, migrations: state.current }
    } catch {
      return { database: false, migrations: false }
    } finally {
      clearTimeout(timer)
    }
  }
}
