import type { ProxySettings } from '@latchkey/protocol'
import { Hono } from 'hono'
import { builtinActivities } from '../activities/index.ts'
import type { DeliveryWingOptions } from '../delivery/deliveryWing.ts'
import { ApiError, ServiceError } from '../kernel/base/errors.ts'
import type { ServiceLogger } from '../kernel/base/ServiceLogger.ts'
import type { KernelOptions } from '../kernel/KernelOptions.ts'
import { Runtime } from '../kernel/Runtime.ts'
import { type ActivityHandlers, Registry, type ServicePlugin } from '../kernel/registry.ts'
import { openMemoryStore } from '../kernel/store/memory.ts'
import { Store } from '../kernel/store/Store.ts'
import type { LimitsWingOptions } from '../limits/limitsWing.ts'
import type { MfaWingOptions } from '../mfa/mfaState.ts'
import { observeRequests } from '../observability/observeRequests.ts'
import { Readiness, type ReadinessReport } from '../observability/Readiness.ts'
import { activityApi } from '../pipeline/activityApi.ts'
import { errorResponse, notFoundResponse } from '../pipeline/errorResponse.ts'
import type { PipelineOptions } from '../pipeline/RateLimitOptions.ts'
import { bodyLimits, type PipelineEnv } from '../pipeline/readJson.ts'
import { securityHeaders } from '../pipeline/securityHeaders.ts'
import { builtinQueries } from '../queries/index.ts'
import type { SignInWingOptions } from '../signin/SignInWingOptions.ts'
import type { WebhooksWingOptions } from '../webhooks/webhooksWing.ts'
import {
  bootstrapService,
  type DevCredentials,
  type DevOptions,
  devCredentials,
  type ServiceMode,
} from './bootstrap.ts'
import { builtinWings, type SendingServiceOptions } from './builtinWings.ts'
import {
  FOREIGN_KEY_MESSAGE,
  KEYRING_ID,
  type KeyringPlan,
  MasterKeyMismatchError,
  planKeyring,
} from './keyring.ts'
import { noteOpen } from './openServices.ts'

/** Largest body of an auth-proxy or operator-settings request (passkey attestations included). */
export const PROXY_BODY_LIMIT = 64 * 1024
/** Largest body of any other route (dev outbox, dev identity provider, export frames). */
export const DEV_BODY_LIMIT = 16 * 1024

/** What `createService` itself takes, beside the kernel's options and each wing's. */
export interface ShellOptions {
  /** Name and root API key of the dev organization created on first start. @default random key */
  dev?: DevOptions
  /**
   * Extra plugins, loaded after the built-in wings (`builtinWings`). One named `sending`
   * (`sendingWing({ senders })`, more chain families) replaces the built-in sending wing; `rpc`,
   * `sending` and `sponsorship` are then given to it, not here. @default []
   */
  plugins?: ServicePlugin[]
  /** Activity handlers that replace or add to the registry (applied last). @default {} */
  activities?: ActivityHandlers
  /** Auth-proxy settings written into the dev organization's proxy configuration on start (CLI flags). */
  proxySettings?: Partial<ProxySettings>
  /**
   * Where one line per request goes (request id, route, status, duration, activity): a pino logger
   * or anything of its shape (`createLogger` from `@latchkey/service/node`).
   * @default no request lines
   */
  logger?: ServiceLogger
}

/**
 * Everything `createService` takes: the kernel's options (`KernelOptions`), the pipeline's
 * (`PipelineOptions`: budgets, body limit), each wing's, declared beside it (`SignInWingOptions`,
 * `DeliveryWingOptions`, the sends'), and the shell's own (`ShellOptions`).
 */
export type CreateServiceOptions = KernelOptions &
  PipelineOptions &
  SignInWingOptions &
  DeliveryWingOptions &
  SendingServiceOptions &
  MfaWingOptions &
  LimitsWingOptions &
  WebhooksWingOptions &
  ShellOptions

export interface Service {
  /** The Hono app (`app.request()` in tests). */
  app: Hono<PipelineEnv>
  /** A `fetch`-shaped function over the app, for the browser client's `fetch` option. */
  fetch: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>
  runtime: Runtime
  registry: Registry
  store: Store
  /** Dev parent organization and its root API key (read on each access). */
  readonly dev: DevCredentials
  /** What the admin listener's `GET /readyz` answers: database, migrations, crypto workers, not draining (and the sponsors' balances). */
  readiness(): Promise<ReadinessReport>
  /**
   * Stops taking work (`/readyz` turns 503) and waits for whatever joined the drain
   * (`runtime.lifecycle.onDrain`: job workers) to finish or hand its work back before `deadline`.
   */
  drain(deadline?: AbortSignal): Promise<void>
  /** Drains (if no one did), stops the job worker, closes each plugin (`close`), then the crypto workers and the store. */
  close(): Promise<void>
}

const randomKey = () => globalThis.crypto.getRandomValues(new Uint8Array(32))

/**
 * The local service: activity API (`/public/v1/submit/*`, `/public/v1/query/*`), plugin routes
 * (`/v1/*` auth proxy, `/dev/*`), `GET /public/v1/jwks` (session-signing key) and
 * `GET /public/v1/signer` (bundle-signing key). Runs in Node and in a browser. In steps: the
 * wings are built (`builtinWings`, then `options.plugins`), the runtime opened over the store and
 * keyring, the kernel bootstrapped, the wings loaded, the routes mounted, the job worker started.
 */
export async function createService(options: CreateServiceOptions = {}): Promise<Service> {
  const mode = options.mode ?? 'dev'
  refuseInProduction(options, mode)
  const plugins = [...builtinWings(options), ...(options.plugins ?? [])]
  const { runtime, keyring, given } = await openRuntime(options, mode, plugins)
  const registry = buildRegistry(plugins, options.activities ?? {})
  await bootstrapKernel(runtime, { keyring, given, dev: options.dev, mode })
  // Made before the plugins load: a plugin's state may keep it for in-process calls.
  const app = new Hono<PipelineEnv>()
  await loadWings(runtime, plugins, app)
  if (options.proxySettings) await applyProxySettings(runtime, options.proxySettings)
  // The plugins' background work (the send worker): a drain stops it and lets what is under way finish.
  for (const plugin of plugins) {
    const stop = plugin.start?.(runtime)
    if (stop) runtime.lifecycle.onDrain(() => stop())
  }

  const readiness = mountRoutes(app, { runtime, registry, plugins, options })
  const stopFollowing = followKeyring(runtime)
  startJobs(runtime)
  let closing: Promise<void> | undefined
  const service: Service = {
    app,
    fetch: (input, init) => Promise.resolve(app.fetch(new Request(input, init))),
    runtime,
    registry,
    store: runtime.store,
    get dev() {
      return devCredentials(runtime)
    },
    readiness: () => readiness.check({ details: true }),
    drain: (deadline) => runtime.lifecycle.drain(deadline),
    // A second call waits for the first close instead of closing a closed store again.
    close: () =>
      (closing ??= (async () => {
        closed()
        stopFollowing()
        await closeService(runtime, plugins)
      })()),
  }
  const closed = noteOpen(service)
  return service
}

/** What production refuses before anything is opened: a memory store, an implicit key, dev options. */
function refuseInProduction(options: CreateServiceOptions, mode: ServiceMode): void {
  if (mode !== 'production') return
  if (!(options.store instanceof Store))
    throw new Error('production mode needs a durable store (openDataDir or openPostgres), never memory')
  if (options.masterKey === undefined && (options.masterKeys ?? []).length === 0)
    throw new Error('production mode needs the master key given explicitly (masterKey)')
  if (options.dev !== undefined)
    throw new Error('production mode has no dev organization: drop the dev option')
}

/**
 * Opens the store (a memory one unless given), plans the keyring (which version each key given
 * is; nothing is written until the keys are known to open the data) and makes the runtime.
 */
async function openRuntime(
  options: CreateServiceOptions,
  mode: ServiceMode,
  plugins: readonly ServicePlugin[],
): Promise<{ runtime: Runtime; keyring: KeyringPlan; given: Uint8Array[] }> {
  const store = options.store instanceof Store ? options.store : await openMemoryStore(options.memory)
  const clock = options.clock ?? { now: () => Date.now() }
  const given = options.masterKeys ?? [options.masterKey ?? randomKey()]
  let keyring: KeyringPlan
  try {
    keyring = planKeyring(await store.get('keyring', KEYRING_ID), given, clock.now())
  } catch (error) {
    if (error instanceof MasterKeyMismatchError) throw new WrongMasterKeyError(error.message)
    throw error
  }
  const runtime = new Runtime(store, clock, keyring.keys, {
    mode,
    maxTimestampSkewMs: options.maxTimestampSkewMs ?? 5 * 60_000,
    webauthn: {
      rpId: options.webauthn?.rpId ?? 'localhost',
      ...(options.webauthn?.origins ? { origins: options.webauthn.origins } : {}),
    },
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    ...(options.crypto ? { crypto: options.crypto } : {}),
    ...(options.verifyP256 ? { verifyP256: options.verifyP256 } : {}),
    ...(options.events ? { events: options.events } : {}),
    ...(options.jobs ? { jobs: options.jobs } : {}),
    stampVerifiers: new Map(plugins.flatMap((plugin) => Object.entries(plugin.stampVerifiers ?? {}))),
  })
  store.observe(runtime)
  store.timeStages(runtime.timings)
  return { runtime, keyring, given }
}

/** The built-in handlers, then each plugin's, then `activities` (which replace or add, last). */
function buildRegistry(plugins: readonly ServicePlugin[], activities: ActivityHandlers): Registry {
  const registry = new Registry(plugins)
  registry.add({ activities: builtinActivities, queries: builtinQueries })
  for (const plugin of plugins) registry.add(plugin)
  registry.add({ activities })
  return registry
}

/**
 * Makes the kernel's data usable: data sealed under another key is refused before anything is
 * written, a new key's keyring version is stored, and the first start makes the service keys (and
 * in dev the dev organization). A production service refuses a database a dev service made.
 */
async function bootstrapKernel(
  runtime: Runtime,
  start: { keyring: KeyringPlan; given: Uint8Array[]; dev: DevOptions | undefined; mode: ServiceMode },
): Promise<void> {
  runtime.useSealVersion(start.keyring.activeVersion)
  await checkMasterKey(runtime)
  if (start.keyring.write) await storeKeyring(runtime, start.given)
  const { dev, mode } = start
  try {
    if (dev?.apiPrivateKey !== undefined && !/^[0-9a-f]{64}$/i.test(dev.apiPrivateKey))
      throw new Error('dev.apiPrivateKey must be 64 hex characters')
    await runtime.store.transaction((tx) => bootstrapService(tx, runtime, dev, mode))
    await runtime.loadServiceRow()

    // Opening the signer key proves the master key matches the stored data.
    runtime.signerPrivateKey()
  } catch (error) {
    if (error instanceof ApiError) throw error
    throw new Error(`cannot start the service: ${(error as Error).message} (wrong master key?)`, {
      cause: error,
    })
  }
  if (mode === 'production' && runtime.serviceRow.devOrganizationId !== undefined)
    throw new DevDatabaseError()
}

/** Each wing in order: its bootstrap (one transaction), then its state (`state.load`), kept by the runtime. */
async function loadWings(
  runtime: Runtime,
  plugins: readonly ServicePlugin[],
  app: Hono<PipelineEnv>,
): Promise<void> {
  for (const plugin of plugins) {
    if (plugin.bootstrap) await runtime.store.transaction((tx) => plugin.bootstrap!(tx, runtime))
    if (plugin.state) runtime.keepState(plugin.state.key, await plugin.state.load(runtime, app))
  }
  await runtime.loadServiceRow()
}

/**
 * One pipeline for every route family: the body limit of its family while reading, one JSON
 * reader (with a depth limit), and one error mapper for whatever any handler throws. Then the
 * probes, the wings' routes and the activity API. Returns what answers `/readyz`.
 */
function mountRoutes(
  app: Hono<PipelineEnv>,
  parts: {
    runtime: Runtime
    registry: Registry
    plugins: readonly ServicePlugin[]
    options: PipelineOptions & ShellOptions
  },
): Readiness {
  const { runtime, registry, plugins, options } = parts
  app.onError(errorResponse)
  app.notFound(notFoundResponse)
  if (runtime.options.mode === 'production') app.use('*', securityHeaders())
  app.use('*', observeRequests(runtime, options.logger))
  // No answer tells of a commit before it is on disk: on a data dir a transaction's own answer
  // waits for its log sync, and so does one that read what another just committed (`LogSync`).
  app.use('*', async (_c, next) => {
    await next()
    await runtime.store.settled()
  })
  const readiness = new Readiness(runtime, { plugins })
  // The first look at the database, so that no probe waits on one.
  void readiness.database()
  // Before the body limits and plugin routes: probes read no body and must stay cheap.
  app.get('/livez', (c) => c.json({ live: true }))
  app.get('/readyz', async (c) => {
    const report = await readiness.check()
    return c.json(report, report.ready ? 200 : 503)
  })
  app.use(
    '*',
    bodyLimits(
      {
        '/public/': options.maxBodyBytes ?? 256 * 1024,
        '/v1/': PROXY_BODY_LIMIT,
        '/dev/settings/': PROXY_BODY_LIMIT,
      },
      DEV_BODY_LIMIT,
      // These families read their bodies with readBytes, which enforces the limit as it reads.
      ['/public/', '/v1/', '/dev/settings/'],
    ),
  )
  for (const plugin of plugins) plugin.routes?.(app, runtime)
  app.route(
    '/public',
    activityApi(runtime, registry, options.rateLimits ? { rateLimits: options.rateLimits } : {}),
  )
  app.get('/health', (c) => c.json({ ok: true }))
  if (runtime.options.mode !== 'production') {
    // Where a request's time went, stage by stage (`bench:service` reads it around a run; issue 42).
    // The process's own stages (event loop, GC) from the first reset on: a service nobody measures
    // runs no monitor.
    let watching = false
    app.get('/dev/timings', (c) => c.json(runtime.timings.snapshot()))
    app.delete('/dev/timings', (c) => {
      if (!watching) {
        watching = true
        runtime.lifecycle.onDrain(runtime.timings.watchProcess())
      }
      runtime.timings.reset()
      return c.body(null, 204)
    })
  }
  return readiness
}

/** Jobs committed before this start (a crash, a restart) run now too, if any handler is registered. */
function startJobs(runtime: Runtime): void {
  if (runtime.jobs.kinds().length === 0) return
  runtime.jobs.start()
  // A drain stops claiming jobs and waits for the runs under way (an aborted run is handed back).
  runtime.lifecycle.onDrain(() => runtime.jobs.stop())
}

/** Drains (if no one did), stops the job worker, lets each wing release what it opened, then closes crypto and the store. */
async function closeService(runtime: Runtime, plugins: readonly ServicePlugin[]): Promise<void> {
  await runtime.lifecycle.drain(AbortSignal.timeout(0))
  await runtime.jobs.stop()
  for (const plugin of plugins) await plugin.close?.(runtime)
  await runtime.crypto.close?.()
  await runtime.store.close()
}

/**
 * Merges explicit settings (CLI flags, the configuration file) into the proxy configuration of the
 * dev organization, or in production of the parent organization (none before `init`).
 */
async function applyProxySettings(runtime: Runtime, settings: Partial<ProxySettings>): Promise<void> {
  const organizationId =
    runtime.options.mode === 'production'
      ? runtime.serviceRow.parentOrganizationId
      : runtime.serviceRow.devOrganizationId
  if (organizationId === undefined) return
  await runtime.store.transaction(async (tx) => {
    const config = (await tx.findBy('proxyConfigs', 'organizationId', organizationId))[0]
    if (!config) return
    await tx.put('proxyConfigs', {
      ...config,
      ...(settings.enabled !== undefined ? { enabled: settings.enabled } : {}),
      settings: { ...config.settings, ...settings },
      updatedAt: runtime.now(),
    })
  })
}

/**
 * The master key given does not open the secrets the store holds (they were sealed under another
 * key). Thrown before anything is written; the CLI adds which key source it read.
 */
export class WrongMasterKeyError extends ServiceError {
  override name = 'WrongMasterKeyError'
  constructor(message = FOREIGN_KEY_MESSAGE) {
    super(message)
  }
}

/**
 * Stores the keyring this start planned (a first one, or a new key's version), planned again
 * inside the transaction: another instance may have registered the same key meanwhile.
 */
async function storeKeyring(runtime: Runtime, given: Uint8Array[]): Promise<void> {
  await runtime.store.transaction(async (tx) => {
    const again = planKeyring(await tx.get('keyring', KEYRING_ID), given, runtime.now())
    const versions = again.keys.map((entry) => entry.version).join()
    if (versions !== runtime.masterKeyVersions.join())
      throw new WrongMasterKeyError(
        'the keyring changed while this instance started (another instance registered a master key); nothing was changed. Start again',
      )
    if (again.write) await tx.put('keyring', again.write)
  })
}

/** How often an instance on a shared database reads which master-key version is active. */
export const KEYRING_REFRESH_MS = 1_000

/**
 * On a database several instances share, follows the keyring's active version, so that new
 * secrets are sealed under the new key soon after `rotate-master-key` activates it. A process
 * that is a database's only writer (SQLite) learns it at start: rotation runs with it stopped.
 * Returns what stops it.
 */
function followKeyring(runtime: Runtime): () => void {
  if (runtime.store.backend.cachesReads) return () => undefined
  let reading = false
  const timer = setInterval(async () => {
    if (reading) return
    reading = true
    try {
      const row = await runtime.store.get('keyring', KEYRING_ID)
      if (row && row.activeVersion !== runtime.sealVersion && runtime.useSealVersion(row.activeVersion))
        runtime.emit('masterKey.sealing', { version: row.activeVersion })
    } catch {
      // The database is down: the next tick reads again.
    } finally {
      reading = false
    }
  }, KEYRING_REFRESH_MS)
  timer.unref()
  return () => clearInterval(timer)
}

/** A production service refuses a store a dev service created: its dev root key was printed. */
export class DevDatabaseError extends ServiceError {
  override name = 'DevDatabaseError'
  constructor() {
    super(
      'this database was made by `latchkey-service dev`: it holds the dev organization, whose root private key was printed; run production on a database of its own',
    )
  }
}

async function checkMasterKey(runtime: Runtime): Promise<void> {
  const row = await runtime.store.get('service', 'service')
  if (!row) return
  let opened: Uint8Array
  try {
    opened = runtime.open(row.sealedSignerKey)
  } catch {
    throw new WrongMasterKeyError()
  }
  opened.fill(0)
}
