import { utf8ToBytes } from '@noble/hashes/utils.js'
import { UnavailableError } from './base/errors.ts'
import { type EventSink, type ServiceEventMap, type ServiceEventName, silentSink } from './base/events.ts'
import { newId } from './base/ids.ts'
import type { Caller } from './Caller.ts'
import {
  type CryptoRunner,
  createSealer,
  inlineCrypto,
  type JobTiming,
  type SealingKey,
} from './crypto/index.ts'
import { JobQueue, type JobQueueOptions } from './JobQueue.ts'
import { Lifecycle } from './Lifecycle.ts'
import { observeCrypto } from './observeCrypto.ts'
import { StageTimings } from './StageTimings.ts'
import type { ServiceRow } from './store/model.ts'
import type { Store } from './store/Store.ts'

/** Source of time; tests pass a fake one. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number
}

export interface WebAuthnOptions {
  /**
   * Relying-party ids accepted in assertions and attestations.
   * @default ['localhost']
   */
  rpId?: string | string[]
  /**
   * Origins accepted in client data; `undefined` accepts any origin (dev service).
   * @default undefined
   */
  origins?: string[]
}

export interface RuntimeOptions {
  /**
   * `production` (`latchkey-service start`) mounts no dev surface and makes no dev organization;
   * plugins read it to leave theirs out. @default 'dev'
   */
  mode?: 'dev' | 'production'
  /** Largest accepted |now - timestampMs|. @default 300000 (5 minutes) */
  maxTimestampSkewMs: number
  webauthn: Required<Pick<WebAuthnOptions, 'rpId'>> & Pick<WebAuthnOptions, 'origins'>
  /** `fetch` for outgoing calls (the sending wing's JSON-RPC, SMS providers). @default globalThis.fetch */
  fetch: typeof fetch
  /** Where signing and derivation jobs run. @default in the calling thread */
  crypto?: (masterKeys: readonly SealingKey[]) => CryptoRunner
  /** Verifies a P-256 stamp (hex public key, DER hex signature, body). @default WebCrypto */
  verifyP256?: (publicKey: string, signature: string, body: Uint8Array) => Promise<boolean>
  /**
   * Verifiers of stamp headers the built-in authentication does not know, by header name: the
   * plugins' `stampVerifiers`, tried on submit routes after `X-Stamp` and `X-Stamp-WebAuthn`.
   * @default none
   */
  stampVerifiers?: ReadonlyMap<string, StampVerifier>
  /** Where the service's events go (metrics, logs). @default dropped */
  events?: EventSink
  /** The durable job queue's worker: poll interval, lease, timeout, retries. @default JobQueue's */
  jobs?: JobQueueOptions
}

/**
 * Establishes the caller of a request stamped in a plugin's own header (the sign-in wing's
 * `X-Stamp-Attested`) from the header's value and the raw body; throws `ApiError` to refuse.
 */
export type StampVerifier = (
  runtime: Runtime,
  header: string,
  body: Uint8Array,
  targetOrganizationId: string | undefined,
) => Promise<Caller>

/**
 * Names what a plugin keeps for the process's life, with its type: the plugin declares it as
 * `state.key`, its `state.load` returns the value at start, the runtime keeps it, and handlers read
 * it with `runtime.stateOf(key)`. The key object is the identity: one per plugin, made once.
 */
export class PluginStateKey<S> {
  /** Carries `S` for the type checker; never set. */
  declare readonly type?: S

  constructor(readonly name: string) {}
}

/**
 * The service's shared state and helpers, handed to every handler: the store, the clock, the
 * sealer for secrets at rest, the service keys and what each plugin loaded (`stateOf`). (What runs
 * for which path is the `Registry`'s.)
 */
export class Runtime {
  private readonly sealer: ReturnType<typeof createSealer>
  /** Runs signing and derivation jobs (sealed keys in, results out), maybe in worker threads. */
  readonly crypto: CryptoRunner
  /**
   * Durable jobs: `jobs.enqueue(tx, kind, payload)` inside a transaction, handlers registered per
   * kind with `jobs.handle`; the service starts its worker once the plugins are loaded.
   */
  readonly jobs: JobQueue
  /** Where a request's time goes, stage by stage (issue 42; `GET /dev/timings` on a dev service). */
  readonly timings = new StageTimings()
  /** The service's drain: whether it still takes work, and the hooks that finish theirs on stop. */
  readonly lifecycle = new Lifecycle()
  /** The master-key version new secrets are sealed under (the keyring's active one). */
  private sealing: number

  constructor(
    readonly store: Store,
    readonly clock: Clock,
    /** One master key (version 1) or the versions this process holds. */
    masterKeys: Uint8Array | readonly SealingKey[],
    readonly options: RuntimeOptions,
  ) {
    const keys = masterKeys instanceof Uint8Array ? [{ version: 1, key: masterKeys }] : masterKeys
    this.sealer = createSealer(keys)
    this.sealing = this.sealer.versions.at(-1)!
    const runner = options.crypto ? options.crypto(keys) : inlineCrypto(this.sealer)
    // A new wallet's secrets are sealed in the job: under the version this runtime seals under now.
    const crypto: CryptoRunner = {
      run: async (job) => {
        // The jobs that seal (a new or imported wallet's secrets) wait for the active key, as `seal` does.
        if (job.kind === 'newWallet' || job.kind === 'importWallet') this.assertHoldsActiveKey()
        const started = performance.now()
        const timing: JobTiming = {}
        try {
          return await runner.run(
            job.kind === 'signPayloads' ? job : { ...job, sealVersion: this.sealing },
            timing,
          )
        } finally {
          const took = performance.now() - started
          const own = Math.min(took, timing.computeMs ?? took)
          this.timings.record('crypto', own)
          this.timings.record('crypto queue', took - own)
        }
      },
      ...(runner.close ? { close: () => runner.close!() } : {}),
    }
    this.crypto = options.events ? observeCrypto(crypto, this) : crypto
    this.jobs = new JobQueue(this, options.jobs)
  }

  /** The master-key versions this process holds, oldest first. */
  get masterKeyVersions(): readonly number[] {
    return this.sealer.versions
  }

  /** The master-key version new secrets are sealed under. */
  get sealVersion(): number {
    return this.sealing
  }

  /**
   * Seals new secrets under `version` from now on (the keyring made it active); false, changing
   * nothing, when this process does not hold it.
   */
  useSealVersion(version: number): boolean {
    if (!this.sealer.versions.includes(version)) {
      // The keyring moved to a key this process was not given (an instance left out of a
      // rotation's restart): sealing under the old one would leave secrets under a version the
      // rotation retires, which the operator then destroys. Nothing is sealed until a restart
      // with the key (`seal` answers 503), and readiness says so.
      this.missingVersion = version
      return false
    }
    this.missingVersion = undefined
    this.sealing = version
    return true
  }

  /** The active master-key version, when this process does not hold it (see `useSealVersion`). */
  private missingVersion: number | undefined

  /** Refuses (503) while the keyring's active master key is one this process was not given. */
  private assertHoldsActiveKey(): void {
    if (this.missingVersion !== undefined)
      throw new UnavailableError({
        code: 'STORAGE_UNAVAILABLE',
        message: `this instance does not hold the active master key (version ${this.missingVersion}): restart it with the new key (--new-master-key-file); nothing was done`,
      })
  }

  /** False while the keyring's active master key is one this process was not given. */
  get holdsActiveKey(): boolean {
    return this.missingVersion === undefined
  }

  now(): number {
    return this.clock.now()
  }

  /** Reports an event to the configured sinks (metrics, logs); never throws. */
  emit<K extends ServiceEventName>(name: K, data: ServiceEventMap[K]): void {
    const sink = this.options.events ?? silentSink
    try {
      sink.emit(name, data)
    } catch {
      // Observability never fails a request.
    }
  }

  newId(): string {
    return newId(this.clock.now())
  }

  /** Encrypts a secret for storage (AES-256-GCM under the active master key). */
  seal(secret: Uint8Array | string): string {
    this.assertHoldsActiveKey()
    return this.sealer.seal(typeof secret === 'string' ? utf8ToBytes(secret) : secret, this.sealing)
  }

  /** Decrypts a sealed secret; call it only inside the operation that needs the plaintext. */
  open(sealed: string): Uint8Array {
    return this.sealer.open(sealed)
  }

  openText(sealed: string): string {
    return new TextDecoder().decode(this.open(sealed))
  }

  private cachedServiceRow: ServiceRow | undefined

  /** The service row, read once after bootstrap (its keys and dev ids never change afterwards). */
  get serviceRow(): ServiceRow {
    if (!this.cachedServiceRow) throw new Error('service not bootstrapped')
    return this.cachedServiceRow
  }

  async loadServiceRow(): Promise<ServiceRow> {
    const row = await this.store.get('service', 'service')
    if (!row) throw new Error('service not bootstrapped')
    this.cachedServiceRow = row
    return row
  }

  private readonly pluginStates = new Map<PluginStateKey<unknown>, unknown>()

  /** What a plugin's `state.load` returned at start. */
  stateOf<S>(key: PluginStateKey<S>): S {
    if (!this.pluginStates.has(key)) throw new Error(`plugin state ${key.name} not loaded`)
    return this.pluginStates.get(key) as S
  }

  /** What a plugin's `state.load` returned, or undefined in a service assembled without that plugin. */
  loadedState<S>(key: PluginStateKey<S>): S | undefined {
    return this.pluginStates.get(key) as S | undefined
  }

  /** Keeps a plugin's state for the process's life (`createService` calls it once per plugin). */
  keepState<S>(key: PluginStateKey<S>, state: S): void {
    if (this.pluginStates.has(key)) throw new Error(`plugin state ${key.name} loaded twice`)
    this.pluginStates.set(key, state)
  }

  /** Uncompressed hex of the key that signs export/import bundles. */
  get signerPublicKey(): string {
    return this.serviceRow.signerPublicKey
  }

  signerPrivateKey(): Uint8Array {
    return this.open(this.serviceRow.sealedSignerKey)
  }

  /** Uncompressed hex of the key that signs session JWTs. */
  get sessionPublicKey(): string {
    return this.serviceRow.sessionPublicKey
  }

  sessionPrivateKey(): Uint8Array {
    return this.open(this.serviceRow.sealedSessionKey)
  }
}
