import { ConfigInvalidError } from './baseErrors.ts'
import { createKeyStore } from './keyStore/createKeyStore.ts'
import { createPendingOtpStore } from './session/createPendingOtpStore.ts'
import { createSessionStore } from './session/createSessionStore.ts'
import { hydrateSessions, startSessionPersistence } from './session/hydrateSessions.ts'
import { startSessionTimers } from './session/sessionTimers.ts'
import type { Latchkey, LatchkeyConfig, ResolvedLatchkeyConfig } from './types.ts'

export type { Latchkey, LatchkeyConfig, OpenAuthorizationWindow, ResolvedLatchkeyConfig } from './types.ts'

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

/** The options a client cannot do without. */
type RequiredOption = 'authProxyUrl' | 'baseUrl' | 'authProxyConfigId' | 'organizationId'

/**
 * `LatchkeyConfig` as `createLatchkey` and `<LatchkeyProvider config>` take it: each required
 * option is a string, and when a value may be `undefined` (`import.meta.env.X` typed
 * `string | undefined`) the type checker's error names the option and the fix.
 */
export type LatchkeyConfigParameter = Omit<LatchkeyConfig, RequiredOption> & {
  [K in RequiredOption]:
    | string
    | {
        [hint in `${K} may be undefined: set its env variable (npx latchkey-service dev --env .env.local writes them) and check it is a string`]: never
      }
}

/**
 * Creates a client. Nothing touches `window`, `indexedDB` or `localStorage` here, so it is safe
 * during server rendering; persisted sessions are read on `hydrate()`.
 */
export function createLatchkey(parameter: LatchkeyConfigParameter): Latchkey {
  // validateConfig checks at run time what the parameter's type only hints at.
  const config = parameter as LatchkeyConfig
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
    pendingOtps: createPendingOtpStore(),
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
  stops.push(
    startSessionPersistence(client),
    // Loaded when a session first needs renewing: a page that never gets there never loads it.
    startSessionTimers(client, (sessionId) =>
      import('./actions/auth/refreshSession.ts').then(({ refreshSession }) =>
        refreshSession(client, { sessionId }),
      ),
    ),
  )
  return client
}
