import {
  type ActivityPath,
  type ProxySettings,
  SESSION_HEADER,
  STAMP_HEADER,
  WEBAUTHN_STAMP_HEADER,
} from '@latchkey/protocol'
import { hexToBytes } from '@noble/hashes/utils.js'
import { Hono } from 'hono'
import { cors } from 'hono/cors'
import { builtinActivities } from './activities/index.ts'
import { bootstrapService, type DevCredentials, type DevOptions, devCredentials } from './bootstrap.ts'
import { publicJwk } from './crypto/index.ts'
import { ServiceError } from './errors.ts'
import { runQuery } from './pipeline/runQuery.ts'
import { submitActivity } from './pipeline/submitActivity.ts'
import { builtinPlugins } from './plugins.ts'
import { builtinQueries } from './queries/index.ts'
import { type Clock, Runtime, type WebAuthnOptions } from './Runtime.ts'
import type { ActivityHandler, ActivityHandlers, QueryHandler, ServicePlugin } from './registry.ts'
import { type StorageBackend, Store } from './store/Store.ts'

export interface CreateServiceOptions {
  /**
   * Where data lives: a `Store`, or a durable `StorageBackend` (Node: `fileBackend(dir)` from
   * `latchkey/server/node`).
   * @default a fresh in-memory store
   */
  store?: Store | StorageBackend
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
  /** Largest accepted request body in bytes. @default 262144 */
  maxBodyBytes?: number
  /** `fetch` for outgoing JSON-RPC calls. @default globalThis.fetch */
  fetch?: typeof fetch
}

export interface Service {
  /** The Hono app (`app.request()` in tests). */
  app: Hono
  /** A `fetch`-shaped function over the app, for the browser client's `fetch` option. */
  fetch: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>
  runtime: Runtime
  store: Store
  /** Dev parent organization and its root API key (read on each access). */
  readonly dev: DevCredentials
  close(): void
}

const randomKey = () => globalThis.crypto.getRandomValues(new Uint8Array(32))

/**
 * The local service: activity API (`/public/v1/submit/*`, `/public/v1/query/*`), plugin routes
 * (`/v1/*` auth proxy, `/dev/*`), `GET /public/v1/jwks` (session-signing key) and
 * `GET /public/v1/signer` (bundle-signing key). Runs in Node and in a browser.
 */
export function createService(options: CreateServiceOptions = {}): Service {
  const store = options.store instanceof Store ? options.store : new Store(options.store)
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
    },
    plugins,
  )
  const register = (handlers: ActivityHandlers | undefined) => {
    for (const [path, handler] of Object.entries(handlers ?? {}))
      if (handler) runtime.activities.set(path as ActivityPath, handler as ActivityHandler)
  }
  const registerQueries = (handlers: Record<string, QueryHandler> | undefined) => {
    for (const [path, handler] of Object.entries(handlers ?? {})) runtime.queries.set(path, handler)
  }
  register(builtinActivities)
  registerQueries(builtinQueries)
  for (const plugin of plugins) {
    register(plugin.activities)
    registerQueries(plugin.queries)
  }
  register(options.activities)

  try {
    if (options.dev?.apiPrivateKey !== undefined && !/^[0-9a-f]{64}$/i.test(options.dev.apiPrivateKey))
      throw new Error('dev.apiPrivateKey must be 64 hex characters')
    store.transactionSync((tx) => bootstrapService(tx, runtime, options.dev))
    // Opening the signer key proves the master key matches the stored data.
    runtime.signerPrivateKey()
  } catch (error) {
    throw new Error(`cannot start the service: ${(error as Error).message} (wrong master key?)`, {
      cause: error,
    })
  }
  for (const plugin of plugins)
    if (plugin.bootstrap) store.transactionSync((tx) => plugin.bootstrap!(tx, runtime))
  if (options.proxySettings) applyProxySettings(runtime, options.proxySettings)

  const app = new Hono()
  const maxBodyBytes = options.maxBodyBytes ?? 256 * 1024

  app.onError((error, c) => {
    const serviceError =
      error instanceof ServiceError
        ? error
        : (() => {
            console.error('unexpected service error', error)
            return new ServiceError('INTERNAL', 'internal error')
          })()
    return c.json(serviceError.toBody(), serviceError.status as 400)
  })
  app.notFound((c) => {
    const error = new ServiceError(
      'ROUTE_NOT_FOUND',
      `no route ${c.req.method} ${new URL(c.req.url).pathname}`,
    )
    return c.json(error.toBody(), 404)
  })

  for (const plugin of plugins) plugin.routes?.(app, runtime)

  app.use(
    '/public/*',
    cors({
      origin: '*',
      allowMethods: ['GET', 'POST', 'OPTIONS'],
      allowHeaders: ['Content-Type', 'Accept', STAMP_HEADER, WEBAUTHN_STAMP_HEADER, SESSION_HEADER],
      maxAge: 600,
    }),
  )

  const readBody = async (request: Request): Promise<Uint8Array> => {
    const declared = Number(request.headers.get('content-length') ?? '0')
    if (declared > maxBodyBytes)
      throw new ServiceError('PAYLOAD_TOO_LARGE', `request body exceeds ${maxBodyBytes} bytes`)
    // Read chunk by chunk so a body without (or lying about) content-length stops at the limit.
    const reader = request.body?.getReader()
    if (!reader) return new Uint8Array()
    const chunks: Uint8Array[] = []
    let size = 0
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      size += value.length
      if (size > maxBodyBytes) {
        await reader.cancel()
        throw new ServiceError('PAYLOAD_TOO_LARGE', `request body exceeds ${maxBodyBytes} bytes`)
      }
      chunks.push(value)
    }
    const bytes = new Uint8Array(size)
    let offset = 0
    for (const chunk of chunks) {
      bytes.set(chunk, offset)
      offset += chunk.length
    }
    return bytes
  }

  app.post('/public/v1/submit/:path', async (c) => {
    const bytes = await readBody(c.req.raw)
    return c.json(await submitActivity(runtime, c.req.param('path'), c.req.raw.headers, bytes))
  })
  app.post('/public/v1/query/:path', async (c) => {
    const bytes = await readBody(c.req.raw)
    return c.json((await runQuery(runtime, c.req.param('path'), c.req.raw.headers, bytes)) as object)
  })
  app.get('/public/v1/jwks', (c) =>
    c.json({ keys: [publicJwk(hexToBytes(runtime.sessionPublicKey), 'session')] }),
  )
  app.get('/public/v1/signer', (c) =>
    c.json({ signerPublicKey: runtime.signerPublicKey, sessionPublicKey: runtime.sessionPublicKey }),
  )
  app.get('/health', (c) => c.json({ ok: true }))

  return {
    app,
    fetch: (input, init) => Promise.resolve(app.fetch(new Request(input, init))),
    runtime,
    store,
    get dev() {
      return devCredentials(runtime)
    },
    close: () => store.close(),
  }
}

/** Merges explicit settings (CLI flags) into the dev organization's proxy configuration. */
function applyProxySettings(runtime: Runtime, settings: Partial<ProxySettings>): void {
  const organizationId = runtime.serviceRow.devOrganizationId
  runtime.store.transactionSync((tx) => {
    const config = tx.findBy('proxyConfigs', 'organizationId', organizationId)[0]
    if (!config) return
    tx.put('proxyConfigs', {
      ...config,
      ...(settings.enabled !== undefined ? { enabled: settings.enabled } : {}),
      settings: { ...config.settings, ...settings },
      updatedAt: runtime.now(),
    })
  })
}
