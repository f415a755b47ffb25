import { ConfigInvalidError } from './errors.ts'
import { createKeyStore, type KeyStore, type KeyStoreOption } from './keyStore/createKeyStore.ts'
import { createSessionStore, type SessionStore } from './session/createSessionStore.ts'
import { hydrateSessions, startSessionPersistence } from './session/hydrateSessions.ts'
import type { LatchkeyStorage } from './session/persistence.ts'
import { startSessionTimers } from './session/sessionTimers.ts'
import type { SessionTokens } from './session/types.ts'
import type { FetchFn } from './transport/http.ts'

/** Opens the OAuth authorization URL and resolves with the URL the provider redirected back to. */
export type OpenAuthorizationWindow = (parameters: {
  url: string
  redirectUri: string
  signal?: AbortSignal | undefined
}) => Promise<string>

export interface LatchkeyConfig {
  /** Auth proxy origin, e.g. `http://127.0.0.1:8787` (calls go to `{authProxyUrl}/v1/<path>`). */
  authProxyUrl: string
  /** Activity API origin (calls go to `{baseUrl}/public/v1/...`). */
  baseUrl: string
  /** Sent as `X-Auth-Proxy-Config-Id` on every proxy call. */
  authProxyConfigId: string
  /** The parent organization: sign-ups create sub-organizations under it. */
  organizationId: string
  /**
   * Fetch implementation; pass the local service's `fetch` to run without a network.
   * @default globalThis.fetch
   */
  fetch?: FetchFn
  /**
   * Where session metadata is persisted (never keys or bearer tokens). `null` keeps sessions in memory.
   * @default localStorage when available, else null
   */
  storage?: LatchkeyStorage | null
  /**
   * Where session private keys live. `'memory'` is an opt-in fallback for runtimes without
   * IndexedDB; its sessions do not survive a reload.
   * @default 'indexeddb'
   */
  keyStore?: KeyStoreOption
  passkey?: {
    /** Relying-party id. @default the page's host */
    rpId?: string
    /** Relying-party name shown by the authenticator. @default 'Latchkey' */
    rpName?: string
    /** @default 60_000 */
    timeout?: number
    /** @default 'preferred' */
    userVerification?: 'required' | 'preferred' | 'discouraged'
  }
  session?: {
    /** Refresh a session (new key, `stamp_login`) when its warning time is reached. @default true */
    autoRefresh?: boolean
    /** How long before expiry a session becomes `expiring`. @default 60_000 */
    warningLeadMs?: number
    /** Lifetime asked for at login. @default the service's (`sessionExpirationSeconds`, 900 s for OTP) */
    expirationSeconds?: number
  }
  /**
   * Uncompressed P-256 hex of the key that must have signed export/import bundles. Required for
   * export and import; the local service prints its own as `trustedSignerPublicKey`.
   */
  trustedSignerPublicKey?: string
  polling?: {
    /** First delay before re-reading a pending activity. @default 500 */
    intervalMs?: number
    /** Factor applied to the delay after each poll. @default 1.5 */
    backoff?: number
    /** Longest delay between polls. @default 5_000 */
    maxIntervalMs?: number
    /** Give up (`POLL_TIMEOUT`) after this long. @default 60_000 */
    timeoutMs?: number
  }
  /** Per-request timeout. @default 30_000 */
  requestTimeoutMs?: number
  oauth?: {
    /** Redirect URI registered with the providers. @default wallet_kit_config's oauthRedirectUrl */
    redirectUri?: string
    /**
     * Authorization endpoint per method (`google`, `apple`…).
     * @default the local service's dev identity provider, `{baseUrl}/dev/oidc/<method>/authorize`
     */
    authorizationEndpoints?: Partial<Record<string, string>>
    /**
     * Opens the authorization URL. The default opens a popup and, when the browser blocks it,
     * falls back to a full-page redirect (finish it with `completeOAuthRedirect`).
     */
    openAuthorizationWindow?: OpenAuthorizationWindow
  }
}

export interface ResolvedLatchkeyConfig extends LatchkeyConfig {
  authProxyUrl: string
  baseUrl: string
  fetch: FetchFn
  session: { autoRefresh: boolean; warningLeadMs: number; expirationSeconds?: number }
  polling: { intervalMs: number; backoff: number; maxIntervalMs: number; timeoutMs: number }
  requestTimeoutMs: number
}

/** One client instance. Create one per app (or per provider); instances share nothing. */
export interface Latchkey {
  readonly config: ResolvedLatchkeyConfig
  /** Session state (zustand vanilla store): subscribe with a selector. */
  readonly store: SessionStore
  readonly keyStore: KeyStore
  /** Bearer tokens of read-only sessions, in memory only. */
  readonly tokens: SessionTokens
  /** In-flight work shared by concurrent callers (e.g. one refresh per session). */
  readonly tasks: Map<string, Promise<unknown>>
  /** Reads persisted sessions and checks their keys; idempotent. Actions await it. */
  hydrate(): Promise<void>
  /** Stops the session timers. */
  destroy(): void
}

const trimSlash = (url: string) => url.replace(/\/+$/, '')

// What README snippets and templates leave in place of a value: '…', '...', '<id>', 'YOUR_ID'.
const PLACEHOLDER = /…|\.\.\.|^<.*>$|^your[-_ ]|^(todo|changeme|xxx+)$/i
const WHERE_FROM: Record<string, string> = {
  authProxyUrl: 'the URL printed by `latchkey-service dev`',
  baseUrl: 'the URL printed by `latchkey-service dev`',
  authProxyConfigId:
    'the id printed by `latchkey-service dev` (or VITE_/NEXT_PUBLIC_LATCHKEY_AUTH_PROXY_CONFIG_ID)',
  organizationId: 'the id printed by `latchkey-service dev` (or VITE_/NEXT_PUBLIC_LATCHKEY_ORGANIZATION_ID)',
  trustedSignerPublicKey: 'the key printed by `latchkey-service dev` as trustedSignerPublicKey',
}

/**
 * Throws a `ConfigInvalidError` naming the field for a config that cannot work: a missing value,
 * a placeholder left from a snippet, a URL that is not http(s), an id that cannot travel in an
 * HTTP header, or a signer key that is not uncompressed P-256 hex.
 */
function validateConfig(config: LatchkeyConfig): void {
  const fail = (field: string, problem: string): never => {
    throw new ConfigInvalidError(
      `createLatchkey: \`${field}\` ${problem}; use ${WHERE_FROM[field] ?? 'a valid value'}`,
      field,
    )
  }
  if (typeof config !== 'object' || config === null)
    throw new ConfigInvalidError('createLatchkey: pass a config object')
  for (const field of ['authProxyUrl', 'baseUrl', 'authProxyConfigId', 'organizationId'] as const) {
    const value: unknown = config[field]
    if (typeof value !== 'string' || value.trim().length === 0) fail(field, 'is required')
    const text = value as string
    if (PLACEHOLDER.test(text.trim())) fail(field, `is still the placeholder ${JSON.stringify(text)}`)
    if (field === 'authProxyUrl' || field === 'baseUrl') {
      let url: URL | undefined
      try {
        url = new URL(text)
      } catch {}
      if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
        fail(field, `must be an http(s) URL, got ${JSON.stringify(text)}`)
    } else if (!/^[\x21-\x7e]+$/.test(text))
      // Sent in a header (and as an id): anything else fails in fetch with a ByteString error.
      fail(field, `must be printable ASCII without spaces, got ${JSON.stringify(text)}`)
  }
  const signer: unknown = config.trustedSignerPublicKey
  if (signer !== undefined) {
    if (typeof signer === 'string' && PLACEHOLDER.test(signer.trim()))
      fail('trustedSignerPublicKey', `is still the placeholder ${JSON.stringify(signer)}`)
    if (typeof signer !== 'string' || !/^04[0-9a-f]{128}$/i.test(signer))
      fail(
        'trustedSignerPublicKey',
        'must be an uncompressed P-256 public key in hex (04 and 128 hex digits)',
      )
  }
  for (const field of ['requestTimeoutMs'] as const) {
    const value = config[field]
    if (value !== undefined && !(typeof value === 'number' && value > 0 && Number.isFinite(value)))
      fail(field, `must be a positive number of milliseconds, got ${String(value)}`)
  }
}

/**
 * Creates a client. Nothing touches `window`, `indexedDB` or `localStorage` here, so it is safe
 * during server rendering; persisted sessions are read on `hydrate()`.
 */
export function createLatchkey(config: LatchkeyConfig): Latchkey {
  validateConfig(config)
  const fetchFn = config.fetch ?? ((input, init) => globalThis.fetch(input, init))
  const resolved: ResolvedLatchkeyConfig = {
    ...config,
    authProxyUrl: trimSlash(config.authProxyUrl),
    baseUrl: trimSlash(config.baseUrl),
    fetch: fetchFn,
    session: { autoRefresh: true, warningLeadMs: 60_000, ...config.session },
    polling: { intervalMs: 500, backoff: 1.5, maxIntervalMs: 5_000, timeoutMs: 60_000, ...config.polling },
    requestTimeoutMs: config.requestTimeoutMs ?? 30_000,
  }
  let hydrating: Promise<void> | undefined
  const stops: (() => void)[] = []
  const client: Latchkey = {
    config: resolved,
    store: createSessionStore(),
    keyStore: createKeyStore(config.keyStore),
    tokens: new Map(),
    tasks: new Map(),
    hydrate() {
      hydrating ??= hydrateSessions(client)
      return hydrating
    },
    destroy() {
      for (const stop of stops.splice(0)) stop()
    },
  }
  stops.push(startSessionPersistence(client), startSessionTimers(client))
  return client
}
