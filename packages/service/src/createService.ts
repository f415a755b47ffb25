import type { ProxySettings } from '@latchkey/protocol'
import { Hono } from 'hono'
import { builtinActivities } from './activities/index.ts'
import { bootstrapService, type DevCredentials, type DevOptions, devCredentials } from './bootstrap.ts'
import type { CryptoRunner } from './crypto/index.ts'
import { ApiError } from './errors.ts'
import type { EventSink } from './observability/events.ts'
import { activityApi } from './pipeline/activityApi.ts'
import { errorResponse, notFoundResponse } from './pipeline/errorResponse.ts'
import type { RateLimitOptions } from './pipeline/RateLimitOptions.ts'
import { bodyLimits, type PipelineEnv } from './pipeline/readJson.ts'
import { builtinPlugins } from './plugins.ts'
import { builtinQueries } from './queries/index.ts'
import { type Clock, Runtime, type WebAuthnOptions } from './Runtime.ts'
import { type ActivityHandlers, Registry, type ServicePlugin } from './registry.ts'
import type { OAuthOptions } from './signin/oauth/OAuthProviderConfig.ts'
import { type MemoryStoreOptions, openMemoryStore } from './store/memory.ts'
import { Store } from './store/Store.ts'

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
  /** `fetch` for outgoing JSON-RPC calls. @default globalThis.fetch */
  fetch?: typeof fetch
  /**
   * Where signing and wallet derivation run: in Node, `cryptoWorkers()` from
   * `@latchkey/service/node` runs them in worker threads (the CLI does).
   * @default in the thread that serves requests
   */
  crypto?: (masterKey: Uint8Array) => CryptoRunner
  /**
   * Verifies P-256 stamps: in Node, `nativeVerifyP256` from `@latchkey/service/node` (the CLI
   * uses it) verifies in libuv's thread pool, off the thread that serves requests.
   * @default WebCrypto
   */
  verifyP256?: (publicKey: string, signature: string, body: Uint8Array) => Promise<boolean>
  /** Where the service's events go (`runtime.emit`): metrics and log sinks. @default dropped */
  events?: EventSink
  /**
   * OAuth providers (google, apple, facebook, x, discord) as confidential OpenID Connect clients.
   * @default none: every method uses the dev identity provider
   */
  oauth?: OAuthOptions
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
  close(): Promise<void>
}

const randomKey = () => globalThis.crypto.getRandomValues(new Uint8Array(32))

/**
 * The local service: activity API (`/public/v1/submit/*`, `/public/v1/query/*`), plugin routes
 * (`/v1/*` auth proxy, `/dev/*`), `GET /public/v1/jwks` (session-signing key) and
 * `GET /public/v1/signer` (bundle-signing key). Runs in Node and in a browser.
 */
export async function createService(options: CreateServiceOptions = {}): Promise<Service> {
  const store = options.store instanceof Store ? options.store : await openMemoryStore(options.memory)
  const plugins = [...builtinPlugins, ...(options.plugins ?? [])]
  const runtime = new Runtime(
    store,
    options.clock ?? { now: () => Date.now() },
    options.masterKey ?? randomKey(),
    {
      rpc: { ...options.rpc },
      maxTimestampSkewMs: options.maxTimestampSkewMs ?? 5 * 60_000,
      webauthn: {
        rpId: options.webauthn?.rpId ?? 'localhost',
        ...(options.webauthn?.origins ? { origins: options.webauthn.origins } : {}),
      },
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
      ...(options.crypto ? { crypto: options.crypto } : {}),
      ...(options.verifyP256 ? { verifyP256: options.verifyP256 } : {}),
      ...(options.events ? { events: options.events } : {}),
      ...(options.oauth ? { oauth: options.oauth } : {}),
      ...(options.rateLimits ? { rateLimits: options.rateLimits } : {}),
      stampVerifiers: new Map(plugins.flatMap((plugin) => Object.entries(plugin.stampVerifiers ?? {}))),
    },
  )
  const registry = new Registry(plugins)
  registry.add({ activities: builtinActivities, queries: builtinQueries })
  for (const plugin of plugins) registry.add(plugin)
  registry.add({ activities: options.activities ?? {} })

  // Before anything is written: data sealed under another key is refused, untouched.
  await checkMasterKey(runtime)
  try {
    if (options.dev?.apiPrivateKey !== undefined && !/^[0-9a-f]{64}$/i.test(options.dev.apiPrivateKey))
      throw new Error('dev.apiPrivateKey must be 64 hex characters')
    await store.transaction((tx) => bootstrapService(tx, runtime, options.dev))
    await runtime.loadServiceRow()
    // Opening the signer key proves the master key matches the stored data.
    runtime.signerPrivateKey()
  } catch (error) {
    if (error instanceof ApiError) throw error
    throw new Error(`cannot start the service: ${(error as Error).message} (wrong master key?)`, {
      cause: error,
    })
  }
  // Made before the plugins load: a plugin's state may keep it for in-process calls.
  const app = new Hono<PipelineEnv>()
  for (const plugin of plugins) {
    if (plugin.bootstrap) await store.transaction((tx) => plugin.bootstrap!(tx, runtime))
    if (plugin.state) runtime.keepState(plugin.state.key, await plugin.state.load(runtime, app))
  }
  await runtime.loadServiceRow()
  if (options.proxySettings) await applyProxySettings(runtime, options.proxySettings)

  // One pipeline for every route family: the body limit of its family while reading, one JSON
  // reader (with a depth limit), and one error mapper for whatever any handler throws.
  app.onError(errorResponse)
  app.notFound(notFoundResponse)
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

  return {
    app,
    fetch: (input, init) => Promise.resolve(app.fetch(new Request(input, init))),
    runtime,
    registry,
    store,
    get dev() {
      return devCredentials(runtime)
    },
    close: async () => {
      await runtime.crypto.close?.()
      await store.close()
    },
  }
}

/** Merges explicit settings (CLI flags) into the dev organization's proxy configuration. */
async function applyProxySettings(runtime: Runtime, settings: Partial<ProxySettings>): Promise<void> {
  const organizationId = runtime.serviceRow.devOrganizationId
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
export class WrongMasterKeyError extends Error {
  override name = 'WrongMasterKeyError'
  constructor() {
    super(
      'the master key does not open the secrets in this database (they were sealed under another key); nothing was changed. Start with the master key this data was created with',
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
