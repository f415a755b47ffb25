import type { KeyStore, KeyStoreOption } from './keyStore/createKeyStore.ts'
import type { PendingOtpStore } from './session/createPendingOtpStore.ts'
import type { SessionStore } from './session/createSessionStore.ts'
import type { LatchkeyStorage } from './session/persistence.ts'
import type { SessionTokens } from './session/types.ts'
import type { FetchFn } from './transport/http.ts'

// The client's types, apart from `createLatchkey` so that actions, the transport and the session
// machinery can name the client without importing the module that builds it.

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
  /** E-mail/SMS codes sent by `startOtpSignIn` and not yet superseded (zustand vanilla store). */
  readonly pendingOtps: PendingOtpStore
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
