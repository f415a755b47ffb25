import { stringify } from 'smol-toml'
import type { RateLimit } from '../pipeline/RateLimitOptions.ts'
import type { Config } from './configSchema.ts'
import { configKeys } from './configSchema.ts'
import { startRateLimits } from './sections/rateLimits.ts'

/** What a secret's value is replaced with wherever the configuration is shown. */
export const REDACTED = '<redacted>'

/**
 * The configuration with every secret's value replaced by `<redacted>`: the keys marked secret,
 * an `[rpc]` node's URL as `redactUrl` shows it, and the credentials, query and fragment of every
 * other URL wherever it is (`redactUrlCredentials`), so that a section added later cannot forget its own.
 */
export function redactConfig(config: Config): Config {
  const copy = structuredClone(config) as Record<string, unknown>
  /** Redacts the value at `path` under `table`, a `<name>` standing for every entry of a record. */
  const redact = (table: Record<string, unknown>, path: string[]) => {
    const [name, ...rest] = path as [string, ...string[]]
    for (const entry of name.startsWith('<') ? Object.keys(table) : [name]) {
      const value = table[entry]
      if (value === undefined) continue
      if (rest.length === 0) table[entry] = REDACTED
      else if (typeof value === 'object' && value !== null) redact(value as Record<string, unknown>, rest)
    }
  }
  for (const key of configKeys()) if (key.secret) redact(copy, key.path)
  const redacted = redactUrlsIn(copy) as Record<string, unknown>
  const rpc = redacted.rpc as Record<string, string> | undefined
  if (rpc) for (const chain of Object.keys(rpc)) rpc[chain] = redactUrl(rpc[chain] as string)
  return redacted as Config
}

/** `value` with every string in it, however deep (tables and arrays), through `redactUrlCredentials`. */
function redactUrlsIn(value: unknown): unknown {
  if (typeof value === 'string') return redactUrlCredentials(value)
  if (Array.isArray(value)) return value.map(redactUrlsIn)
  const plain =
    typeof value === 'object' &&
    value !== null &&
    [Object.prototype, null].includes(Object.getPrototypeOf(value))
  if (plain)
    return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, redactUrlsIn(entry)]))
  return value
}

/**
 * A value as it may be shown when it is a URL (it starts with a scheme and `new URL` reads it, as
 * whatever uses it would: `https:user:pw@host/…` and `https:\\user:pw@host/…` carry credentials
 * as `https://user:pw@host/…` does): rebuilt from what the parser read, its user name and password,
 * its query (where a token is often passed: `https://relay/send?token=…`) and its fragment each
 * replaced by `<redacted>`; scheme, host, port and path kept. A value shaped like a URL that does
 * not parse, with an `@` or `?` in it, as its scheme and `<redacted>`. Any other value as it is.
 */
export function redactUrlCredentials(text: string): string {
  // What the URL parser ignores: tabs and newlines anywhere, controls and spaces before.
  const scheme = /^([a-z][a-z0-9+.-]*:)/i.exec(text.replace(/[\t\n\r]/g, '').replace(/^[\0-\x20]+/, ''))
  if (!scheme) return text
  let url: URL
  try {
    url = new URL(text)
  } catch {
    // Shaped like a URL but not one: whatever stands before an `@` may be credentials.
    return text.includes('@') || text.includes('?') ? `${scheme[1]}//${REDACTED}` : text
  }
  if (!url.username && !url.password && !url.search && !url.hash) return text
  const credentials = url.username || url.password ? `${REDACTED}@` : ''
  // `scheme://host` where the parser read an authority (`file:///x` too), else `scheme:path`.
  const authority = url.href.startsWith(`${url.protocol}//`) ? `//${credentials}${url.host}` : ''
  const query = url.search ? `?${REDACTED}` : ''
  const fragment = url.hash ? `#${REDACTED}` : ''
  return `${url.protocol}${authority}${url.pathname}${query}${fragment}`
}

/**
 * A node's URL as it may be shown: its credentials, and a path or query that may carry a provider's
 * API key (`https://eth-mainnet.example/v2/KEY`), replaced by `<redacted>`; scheme, host and port kept.
 */
export function redactUrl(text: string): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return REDACTED
  }
  const credentials = url.username || url.password ? `${REDACTED}@` : ''
  const rest = (url.pathname !== '/' && url.pathname !== '') || url.search ? `/${REDACTED}` : ''
  return `${url.protocol}//${credentials}${url.host}${rest}`
}

/** A budget as `[rate_limits]` writes it. */
const budgetOf = (limit: RateLimit) => ({
  per_second: limit.perSecond,
  ...(limit.burst !== undefined ? { burst: limit.burst } : {}),
})

/**
 * The configuration `start` runs with: what was given, and the budgets `start` applies where
 * `[rate_limits]` leaves them out (`startRateLimits`, the one place that rule lives).
 */
export function effectiveConfig(config: Config): Config {
  const budgets = startRateLimits(config.rate_limits)
  return {
    ...config,
    rate_limits: {
      ...(budgets.perKey ? { per_key: budgetOf(budgets.perKey) } : {}),
      ...(budgets.perOrganization ? { per_organization: budgetOf(budgets.perOrganization) } : {}),
      ...(budgets.perClientAddress ? { per_client_address: budgetOf(budgets.perClientAddress) } : {}),
    },
  }
}

/** The effective configuration, defaults included and secrets redacted, as TOML (a file one could start from) or JSON. */
export function printConfig(config: Config, format: 'toml' | 'json'): string {
  const redacted = redactConfig(effectiveConfig(config))
  return format === 'json' ? `${JSON.stringify(redacted, null, 2)}\n` : `${stringify(redacted)}\n`
}
