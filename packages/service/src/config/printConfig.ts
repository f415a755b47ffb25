import { stringify } from 'smol-toml'
import type { Config } from './configSchema.ts'
import { configKeys } from './configSchema.ts'

/** What a secret's value is replaced with wherever the configuration is shown. */
export const REDACTED = '<redacted>'

/** The configuration with every secret's value replaced by `<redacted>`. */
export function redactConfig(config: Config): Config {
  const copy = structuredClone(config) as Record<string, Record<string, unknown>>
  for (const key of configKeys())
    if (key.secret && copy[key.path[0]]?.[key.path[1]] !== undefined)
      copy[key.path[0]]![key.path[1]] = REDACTED
  return copy as Config
}

/** The effective configuration, secrets redacted, as TOML (a file one could start from) or JSON. */
export function printConfig(config: Config, format: 'toml' | 'json'): string {
  const redacted = redactConfig(config)
  return format === 'json' ? `${JSON.stringify(redacted, null, 2)}\n` : `${stringify(redacted)}\n`
}
