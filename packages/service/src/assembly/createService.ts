import type { ProxySettings } from '@latchkey/protocol'
import { Hono } from 'hono'
import { builtinActivities } from '../activities/index.ts'
import { createDelivery, OTP_DELIVERY_JOB } from '../delivery/createDelivery.ts'
import type { DeliveryOptions } from '../delivery/DeliveryOptions.ts'
import { ApiError, ServiceError } from '../kernel/base/errors.ts'
import { type EventSink, silentSink } from '../kernel/base/events.ts'
import type { CryptoRunner, SealingKey } from '../kernel/crypto/index.ts'
import type { JobQueueOptions } from '../kernel/JobQueue.ts'
import { type Clock, Runtime, type WebAuthnOptions } from '../kernel/Runtime.ts'
import { type ActivityHandlers, Registry, type ServicePlugin } from '../kernel/registry.ts'
import { type MemoryStoreOptions, openMemoryStore } from '../kernel/store/memory.ts'
import { Store } from '../kernel/store/Store.ts'
import { observeRequests } from '../observability/observeRequests.ts'
import { Readiness, type ReadinessReport } from '../observability/Readiness.ts'
import type { ServiceLogger } from '../observability/ServiceLogger.ts'
import { activityApi } from '../pipeline/activityApi.ts'
import { errorResponse, notFoundResponse } from '../pipeline/errorResponse.ts'
import type { RateLimitOptions } from '../pipeline/RateLimitOptions.ts'
import { bodyLimits, type PipelineEnv } from '../pipeline/readJson.ts'
import { securityHeaders } from '../pipeline/securityHeaders.ts'
import { builtinQueries } from '../queries/index.ts'
import { SENDING_DEFAULTS, type SendingOptions, type SponsorshipOptions } from '../sending/SendingOptions.ts'
import { startSendWorker } from '../sending/sendWorker.ts'
import { ensureSponsors } from '../sending/sponsors.ts'
import type { CaptchaOptions } from '../signin/captcha/CaptchaOptions.ts'
import type { OAuthOptions } from '../signin/oauth/OAuthProviderConfig.ts'
import {
  bootstrapService,
  type DevCredentials,
  type DevOptions,
  devCredentials,
  type ServiceMode,
} from './bootstrap.ts'
import { builtinPlugins } from './builtinWings.ts'
import {
  FOREIGN_KEY_MESSAGE,
  KEYRING_ID,
  type KeyringPlan,
  MasterKeyMismatchError,
  planKeyring,
} from './keyring.ts'

/** Largest body of an auth-proxy or operator-settings request (passkey attestations included). */
export const PROXY_BODY_LIMIT = 64 * 1024
/** Largest body of any other route (dev outbox, dev identity provider, export frames). */
export const DEV_BODY_LIMIT = 16 * 1024

export interface CreateServiceOptions {
  /**
   * Where data lives: a `Store` (Node: `openDataDir(dir)` for a SQLite file, `openPostgres(url)`
   * for PostgreSQL, from `@latchkey/service/node`).
   * @default a fresh in-memory SQLite database
   */
  store?: Store
  /** Options of the default in-memory store (in a browser: where sql.js's WASM file is). */
  memory?: MemoryStoreOptions
  /**
   * 32-byte key that seals mnemonics and private keys at rest. A durable store needs the same key
   * on every start (the CLI keeps it in `<data-dir>/master.key`).
   * @default a random key (fine for the in-memory store)
   */
  masterKey?: Uint8Array
  /**
   * Several master keys, instead of `masterKey`: the key in use first, then the new key a
   * rotation (`latchkey-service rotate-master-key`) moves to. Each is matched to its version in
   * the database's keyring (a key it does not know yet is registered as the next version); new
   * secrets are sealed under the keyring's active version, values under any held version open.
   * @default [masterKey]
   */
  masterKeys?: Uint8Array[]
  /** @default the system clock */
  clock?: Clock
  /** JSON-RPC endpoints by CAIP-2 id for `eth_send_raw_transaction`. @default {} */
  rpc?: Record<string, string>
  /** Largest accepted distance of `timestampMs` from the clock. @default 300000 */
  maxTimestampSkewMs?: number
  /** Passkey relying party. @default { rpId: 'localhost', origins: undefined (any) } */
  webauthn?: WebAuthnOptions
  /** Name and root API key of the dev organization created on first start. @default random key */
  dev?: DevOptions
  /** Extra plugins, loaded after the built-in ones. @default [] */
  plugins?: ServicePlugin[]
  /** Activity handlers that replace or add to the registry (applied last). @default {} */
  activities?: ActivityHandlers
  /** Auth-proxy settings written into the dev organization's proxy configuration on start (CLI flags). */
  proxySettings?: Partial<ProxySettings>
  /** Largest accepted body on the activity API (`/public/*`), in bytes. @default 262144 */
  maxBodyBytes?: number
  /** `fetch` for outgoing JSON-RPC calls and SMS providers. @default globalThis.fetch */
  fetch?: typeof fetch
  /**
   * Where signing and wallet derivation run: in Node, `cryptoWorkers()` from
   * `@latchkey/service/node` runs them in worker threads (the CLI does).
   * @default in the thread that serves requests
   */
  crypto?: (masterKeys: readonly SealingKey[]) => CryptoRunner
  /**
   * Verifies P-256 stamps: in Node, `nativeVerifyP256` from `@latchkey/service/node` (the CLI
   * uses it) verifies in libuv's thread pool, off the thread that serves requests.
   * @default WebCrypto
   */
  verifyP256?: (publicKey: string, signature: string, body: Uint8Array) => Promise<boolean>
  /** Where the service's events go (`runtime.emit`): metrics and log sinks. @default dropped */
  events?: EventSink
  /**
   * The durable job queue's worker (`runtime.jobs`): poll interval, lease, run timeout, retries
   * and backoff. It runs only when some handler is registered.
   * @default JobQueue's defaults
   */
  jobs?: JobQueueOptions
  /**
   * Real delivery of one-time codes: e-mail over SMTP (with `mailer: smtpMailer` from
   * `@latchkey/service/node`) and SMS through Twilio or a signed webhook. A code for a channel with
   * a provider is committed with a delivery job and sent after the commit by one instance.
   * @default none: every code goes to the dev outbox
   */
  delivery?: DeliveryOptions
  /**
   * `production` (`latchkey-service start`, `init`): no dev organization, no dev API key, no
   * `/dev/*` routes (outbox, dev identity provider, operator settings); it needs a durable `store`
   * and an explicit `masterKey`, refuses `dev` options and a store a dev service created, and
   * sends security headers on every answer. `proxySettings` then apply to the parent organization
   * `init` made.
   * @default 'dev'
   */
  mode?: ServiceMode
  /**
   * Where one line per request goes (request id, route, status, duration, activity): a pino logger
   * or anything of its shape (`createLogger` from `@latchkey/service/node`).
   * @default no request lines
   */
  logger?: ServiceLogger
  /**
   * OAuth providers (google, apple, facebook, x, discord) as confidential OpenID Connect clients.
   * @default none: every method uses the dev identity provider
   */
  oauth?: OAuthOptions
  /**
   * A CAPTCHA (Cloudflare Turnstile or hCaptcha) on the auth proxy's `otp_init`: a request whose
   * token passes is not held back by the per-contact send budget.
   * @default none
   */
  captcha?: CaptchaOptions
  /** How sends are broadcast and tracked (worker, timeouts, replacement bounds). @default SENDING_DEFAULTS */
  sending?: SendingOptions
  /** Gas sponsorship (sponsor accounts, delegate contracts, caps). @default none: `sponsor: true` is refused */
  sponsorship?: SponsorshipOptions
  /**
   * Budgets on the activity API, per credential and per organization: a request over one is
   * refused with 429 `RATE_LIMITED` and `Retry-After`. Held across instances on PostgreSQL.
   * @default none (the `dev` command sets none unless told)
   */
  rateLimits?: RateLimitOptions
}

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
  /** Drains (if no one did), then closes the crypto workers and the store. */
  close(): Promise<void>
}

const randomKey = () => globalThis.crypto.getRandomValues(new Uint8Array(32))

/**
 * The local service: activity API (`/public/v1/submit/*`, `/public/v1/query/*`), plugin routes
 * (`/v1/*` auth proxy, `/dev/*`), `GET /public/v1/jwks` (session-signing key) and
 * `GET /public/v1/signer` (bundle-signing key). Runs in Node and in a browser.
 */
export async function createService(options: CreateServiceOptions = {}): Promise<Service> {
  const mode = options.mode ?? 'dev'
  if (mode === 'production') {
    if (!(options.store instanceof Store))
      throw new Error('production mode needs a durable store (openDataDir or openPostgres), never memory')
    if (options.masterKey === undefined && (options.masterKeys ?? []).length === 0)
      throw new Error('production mode needs the master key given explicitly (masterKey)')
    if (options.dev !== undefined)
      throw new Error('production mode has no dev organization: drop the dev option')
  }
  const store = options.store instanceof Store ? options.store : await openMemoryStore(options.memory)
  const plugins = [...builtinPlugins, ...(options.plugins ?? [])]
  const clock = options.clock ?? { now: () => Date.now() }
  const fetcher: typeof fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
  const delivery = options.delivery
    ? createDelivery(options.delivery, {
        events: options.events ?? silentSink,
        now: () => clock.now(),
        fetch: fetcher,
      })
    : undefined
  const given = options.masterKeys ?? [options.masterKey ?? randomKey()]
  // Which version each key is; nothing is written until the keys are known to open the data.
  let keyring: KeyringPlan
  try {
    keyring = planKeyring(await store.get('keyring', KEYRING_ID), given, clock.now())
  } catch (error) {
    if (error instanceof MasterKeyMismatchError) throw new WrongMasterKeyError(error.message)
    throw error
  }
  const runtime = new Runtime(store, clock, keyring.keys, {
    mode,
    rpc: { ...options.rpc },
    maxTimestampSkewMs: options.maxTimestampSkewMs ?? 5 * 60_000,
    webauthn: {
      rpId: options.webauthn?.rpId ?? 'localhost',
      ...(options.webauthn?.origins ? { origins: options.webauthn.origins } : {}),
    },
    fetch: fetcher,
    ...(options.crypto ? { crypto: options.crypto } : {}),
    ...(options.verifyP256 ? { verifyP256: options.verifyP256 } : {}),
    ...(options.events ? { events: options.events } : {}),
    ...(options.oauth ? { oauth: options.oauth } : {}),
    ...(options.captcha ? { captcha: options.captcha } : {}),
    ...(options.rateLimits ? { rateLimits: options.rateLimits } : {}),
    sending: { ...SENDING_DEFAULTS, ...options.sending },
    ...(options.sponsorship ? { sponsorship: options.sponsorship } : {}),
    ...(options.jobs ? { jobs: options.jobs } : {}),
    ...(delivery ? { delivery } : {}),
    stampVerifiers: new Map(plugins.flatMap((plugin) => Object.entries(plugin.stampVerifiers ?? {}))),
  })
  if (delivery) runtime.jobs.handle(OTP_DELIVERY_JOB, delivery.handler)
  store.observe(runtime)
  const registry = new Registry(plugins)
  registry.add({ activities: builtinActivities, queries: builtinQueries })
  for (const plugin of plugins) registry.add(plugin)
  registry.add({ activities: options.activities ?? {} })

  runtime.useSealVersion(keyring.activeVersion)
  // Before anything is written: data sealed under another key is refused, untouched.
  await checkMasterKey(runtime)
  if (keyring.write) await storeKeyring(runtime, given)
  try {
    if (options.dev?.apiPrivateKey !== undefined && !/^[0-9a-f]{64}$/i.test(options.dev.apiPrivateKey))
      throw new Error('dev.apiPrivateKey must be 64 hex characters')
    await store.transaction((tx) => bootstrapService(tx, runtime, options.dev, mode))
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
  // Made before the plugins load: a plugin's state may keep it for in-process calls.
  const app = new Hono<PipelineEnv>()
  for (const plugin of plugins) {
    if (plugin.bootstrap) await store.transaction((tx) => plugin.bootstrap!(tx, runtime))
    if (plugin.state) runtime.keepState(plugin.state.key, await plugin.state.load(runtime, app))
  }
  await runtime.loadServiceRow()
  if (options.proxySettings) await applyProxySettings(runtime, options.proxySettings)
  if (options.sponsorship) await ensureSponsors(runtime, options.sponsorship)
  // Sends need a node: without any, there is nothing to broadcast or track.
  const sendWorker =
    runtime.options.sending?.worker && Object.keys(runtime.options.rpc).length > 0
      ? startSendWorker(runtime)
      : undefined
  // A drain stops taking sends off the queue and lets the broadcast under way finish.
  if (sendWorker) runtime.lifecycle.onDrain(() => sendWorker.stop())

  // One pipeline for every route family: the body limit of its family while reading, one JSON
  // reader (with a depth limit), and one error mapper for whatever any handler throws.
  app.onError(errorResponse)
  app.notFound(notFoundResponse)
  if (mode === 'production') app.use('*', securityHeaders())
  app.use('*', observeRequests(runtime, options.logger))
  const readiness = new Readiness(runtime)
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
  app.route('/public', activityApi(runtime, registry))
  app.get('/health', (c) => c.json({ ok: true }))
  const stopFollowing = followKeyring(runtime)
  // Jobs committed before this start (a crash, a restart) run now too.
  if (runtime.jobs.kinds().length > 0) {
    runtime.jobs.start()
    // A drain stops claiming jobs and waits for the runs under way (an aborted run is handed back).
    runtime.lifecycle.onDrain(() => runtime.jobs.stop())
  }

  return {
    app,
    fetch: (input, init) => Promise.resolve(app.fetch(new Request(input, init))),
    runtime,
    registry,
    store,
    get dev() {
      return devCredentials(runtime)
    },
    readiness: () => readiness.check({ sponsors: true }),
    drain: (deadline) => runtime.lifecycle.drain(deadline),
    close: async () => {
      stopFollowing()
      await sendWorker?.stop()
      await runtime.lifecycle.drain(AbortSignal.timeout(0))
      await runtime.jobs.stop()
      delivery?.close()
      await runtime.crypto.close?.()
      await store.close()
    },
  }
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
