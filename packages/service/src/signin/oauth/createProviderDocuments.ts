import {
  createLocalJWKSet,
  errors,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyOptions,
  jwtVerify,
} from 'jose'
import { CredentialError } from '../../kernel/base/errors.ts'

/** Reaches a provider (discovery, JWKS, token endpoint). */
export type ProviderFetch = (url: string, init: RequestInit) => Promise<Response> | Response

export interface ProviderDocumentsOptions {
  fetch: ProviderFetch
  /** Epoch milliseconds. */
  now: () => number
  /** Longest wait for one read. @default 10000 */
  timeoutMs?: number
  /** Kept this long when the provider sends no `Cache-Control` max-age. @default 3600000 */
  cacheMs?: number
  /** Shortest time between JWKS reads forced by an unknown `kid`. @default 60000 */
  jwksRefetchFloorMs?: number
  /** How long a failed read is remembered before the URL is read again; doubles with each failure. @default 30000 */
  failureBackoffMs?: number
  /** The longest the back-off grows to. @default 300000 */
  longestFailureBackoffMs?: number
}

/** The OpenID Connect discovery fields the service uses. */
export interface DiscoveryDocument {
  issuer: string
  authorization_endpoint?: string
  token_endpoint: string
  jwks_uri: string
  token_endpoint_auth_methods_supported?: string[]
}

interface Entry<T> {
  value: T
  fetchedAt: number
  expiresAt: number
}

/** A failed read of one URL: its error, answered again until `retryAt` without reading. */
interface Failure {
  error: unknown
  retryAt: number
  backoffMs: number
}

/** Failed URLs remembered at once before those whose back-off has ended are forgotten. */
const MOST_REMEMBERED_FAILURES = 1000

/** A max-age is honoured up to this; a provider cannot pin a key set for longer. */
const LONGEST_CACHE_MS = 24 * 60 * 60 * 1000

/** How long a response may be kept: its `Cache-Control` max-age (capped), nothing if no-store or no-cache. */
export function cacheLifetimeMs(response: Response, fallbackMs: number): number {
  const header = response.headers.get('cache-control')
  if (!header) return fallbackMs
  const directives = header
    .toLowerCase()
    .split(',')
    .map((d) => d.trim())
  if (directives.includes('no-store') || directives.includes('no-cache')) return 0
  const maxAge = directives.find((d) => d.startsWith('max-age='))
  if (!maxAge) return fallbackMs
  const seconds = Number(maxAge.slice('max-age='.length))
  if (!Number.isFinite(seconds) || seconds < 0) return fallbackMs
  const age = Number(response.headers.get('age') ?? 0)
  const remaining = seconds - (Number.isFinite(age) && age > 0 ? age : 0)
  return Math.min(Math.max(remaining, 0) * 1000, LONGEST_CACHE_MS)
}

/**
 * Discovery documents and key sets of OAuth providers, read with a timeout and kept as long as the
 * provider's cache headers allow. A token whose `kid` the cached set lacks makes the set be read
 * again (a provider rotated its keys), at most once per `jwksRefetchFloorMs` per set. Concurrent
 * readers of the same URL share one request; a provider that cannot be reached is an
 * `OAUTH_EXCHANGE_FAILED`, unless an expired copy is at hand, which is used meanwhile. A failed
 * read is remembered: the URL is not read again for `failureBackoffMs` (doubling with each failure
 * in a row up to `longestFailureBackoffMs`, forgotten on a success), and meanwhile its readers get
 * the expired copy or the same error at once, so callers (anonymous ones among them) cannot make
 * the service call a struggling provider more than once per back-off.
 */
export function createProviderDocuments(options: ProviderDocumentsOptions) {
  const timeoutMs = options.timeoutMs ?? 10_000
  const cacheMs = options.cacheMs ?? 60 * 60 * 1000
  const floorMs = options.jwksRefetchFloorMs ?? 60_000
  const backoffMs = options.failureBackoffMs ?? 30_000
  const longestBackoffMs = options.longestFailureBackoffMs ?? 5 * 60_000
  const cache = new Map<string, Entry<unknown>>()
  const pending = new Map<string, Promise<Entry<unknown>>>()
  const failures = new Map<string, Failure>()

  /** Reads `url` once for all concurrent readers, and remembers how the read ended. */
  function readShared<T>(url: string, what: string, check: (body: unknown) => T): Promise<Entry<T>> {
    const inFlight = pending.get(url) as Promise<Entry<T>> | undefined
    if (inFlight) return inFlight
    const started = read(url, what, check).then(
      (entry) => {
        failures.delete(url)
        cache.set(url, entry)
        return entry
      },
      (error: unknown) => {
        const now = options.now()
        const previous = failures.get(url)
        const wait = previous ? Math.min(previous.backoffMs * 2, longestBackoffMs) : backoffMs
        // Bounded however many URLs fail: ended back-offs go first (their doubling starts over).
        if (failures.size >= MOST_REMEMBERED_FAILURES)
          for (const [other, failure] of failures) if (failure.retryAt <= now) failures.delete(other)
        failures.set(url, { error, retryAt: now + wait, backoffMs: wait })
        throw error
      },
    )
    const shared = started.finally(() => pending.delete(url))
    pending.set(url, shared)
    return shared
  }

  async function read<T>(url: string, what: string, check: (body: unknown) => T): Promise<Entry<T>> {
    let response: Response
    try {
      response = await options.fetch(url, {
        method: 'GET',
        headers: { Accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      })
    } catch (error) {
      throw new CredentialError({
        code: 'OAUTH_EXCHANGE_FAILED',
        message: `could not read the provider's ${what}: ${(error as Error).message}`,
      })
    }
    let body: unknown
    try {
      body = await response.json()
    } catch {
      body = undefined
    }
    if (!response.ok)
      throw new CredentialError({
        code: 'OAUTH_EXCHANGE_FAILED',
        message: `could not read the provider's ${what}: HTTP ${response.status}`,
      })
    const value = check(body)
    const fetchedAt = options.now()
    return { value, fetchedAt, expiresAt: fetchedAt + cacheLifetimeMs(response, cacheMs) }
  }

  /** The cached document at `url`, read again when expired (or when `refresh` says so). */
  async function get<T>(
    url: string,
    what: string,
    check: (body: unknown) => T,
    refresh?: (entry: Entry<T>) => boolean,
  ): Promise<Entry<T>> {
    const cached = cache.get(url) as Entry<T> | undefined
    if (cached && cached.expiresAt > options.now() && !refresh?.(cached)) return cached
    try {
      // Within the back-off of a failed read the provider is not asked again.
      const failed = failures.get(url)
      if (failed && failed.retryAt > options.now() && !pending.has(url)) throw failed.error
      return await readShared(url, what, check)
    } catch (error) {
      // A provider that is briefly down does not stop sign-ins its last known keys can verify.
      if (cached && !refresh) return cached
      throw error
    }
  }

  const checkDiscovery = (issuer: string) => (body: unknown) => {
    const doc = body as Partial<DiscoveryDocument> | undefined
    if (!doc || typeof doc.token_endpoint !== 'string' || typeof doc.jwks_uri !== 'string')
      throw new CredentialError({
        code: 'OAUTH_EXCHANGE_FAILED',
        message: "the provider's discovery document lacks token_endpoint or jwks_uri",
      })
    // OpenID Connect Discovery §4.3: the document must name the issuer it was read for.
    if (doc.issuer !== issuer)
      throw new CredentialError({
        code: 'OAUTH_EXCHANGE_FAILED',
        message: `the provider's discovery document names issuer ${JSON.stringify(doc.issuer)}, not ${issuer}`,
      })
    return doc as DiscoveryDocument
  }

  const checkJwks = (body: unknown) => {
    const set = body as Partial<JSONWebKeySet> | undefined
    if (!set || !Array.isArray(set.keys))
      throw new CredentialError({
        code: 'OAUTH_EXCHANGE_FAILED',
        message: "the provider's JWKS has no keys array",
      })
    return set as JSONWebKeySet
  }

  return {
    /** The issuer's `/.well-known/openid-configuration`. */
    async discovery(issuer: string): Promise<DiscoveryDocument> {
      const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`
      return (await get(url, 'discovery document', checkDiscovery(issuer))).value
    },

    /**
     * Verifies a JWT with the key set at `jwksUri`; a `kid` the cached set lacks reads the set again
     * (no sooner than the floor after the last read) and tries once more.
     */
    async verify(token: string, jwksUri: string, verifyOptions: JWTVerifyOptions): Promise<JWTPayload> {
      const first = await get(jwksUri, 'JWKS', checkJwks)
      try {
        return (await jwtVerify(token, createLocalJWKSet(first.value), verifyOptions)).payload
      } catch (error) {
        if (!(error instanceof errors.JWKSNoMatchingKey) || options.now() - first.fetchedAt < floorMs)
          throw error
      }
      const again = await get(jwksUri, 'JWKS', checkJwks, (entry) => entry.fetchedAt === first.fetchedAt)
      return (await jwtVerify(token, createLocalJWKSet(again.value), verifyOptions)).payload
    },
  }
}

export type ProviderDocuments = ReturnType<typeof createProviderDocuments>
