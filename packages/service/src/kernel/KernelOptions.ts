import type { EventSink } from './base/events.ts'
import type { CryptoRunner, SealingKey } from './crypto/index.ts'
import type { JobQueueOptions } from './JobQueue.ts'
import type { Clock, WebAuthnOptions } from './Runtime.ts'
import type { MemoryStoreOptions } from './store/memory.ts'
import type { Store } from './store/Store.ts'

/**
 * What `createService` takes for the kernel: where data lives and the keys that seal it, the
 * clock, authentication's bounds, where crypto runs, events and jobs. (Each wing declares its own
 * options beside it; `CreateServiceOptions` is their composition.)
 */
export interface KernelOptions {
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
  /** Largest accepted distance of `timestampMs` from the clock. @default 300000 */
  maxTimestampSkewMs?: number
  /** Passkey relying party. @default { rpId: 'localhost', origins: undefined (any) } */
  webauthn?: WebAuthnOptions
  /** `fetch` for outgoing calls: JSON-RPC, SMS providers, OAuth providers, CAPTCHA checks. @default globalThis.fetch */
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
   * `production` (`latchkey-service start`, `init`): no dev organization, no dev API key, no
   * `/dev/*` routes (outbox, dev identity provider, operator settings); it needs a durable `store`
   * and an explicit `masterKey`, refuses `dev` options and a store a dev service created, and
   * sends security headers on every answer. `proxySettings` then apply to the parent organization
   * `init` made.
   * @default 'dev'
   */
  mode?: 'dev' | 'production'
}
