import { stringify } from 'smol-toml'
import type { Config } from './configSchema.ts'
import { configKeys } from './configSchema.ts'

/** What a secret's value is replaced with wherever the configuration is shown. */
export const REDACTED = '<redacted>'

/** The configuration with every secret's value replaced by `<redacted>`. */
export function redactConfig(config: Config): Config {
  const copy = structuredClone(config) as Record<string, unknown>
  for (const key of configKeys()) {
    if (!key.secret) continue
    let table: Record<string, unknown> | undefined = copy
    for (const name of key.path.slice(0, -1)) {
      const next: unknown = table?.[name]
      table = typeof next === 'object' && next !== null ? (next as Record<string, unknown>) : undefined
    }
    if (!table) continue
    const last = key.path.at(-1)!
    // A record's entries (`<name>`) are secret one and all.
    for (const name of last.startsWith('<') ? Object.keys(table) : [last])
      if (table[name] !== undefined) table[name] = REDACTED
  }
  return copy as Config
}

/** The effective configuration, secrets redacted, as TOML (a file one could start from) or JSON. */
export function printConfig(config: Config, format: 'toml' | 'json'): string {
  const redacted = redactConfig(config)
  return format === 'json' ? `${JSON.stringify(redacted, null, 2)}\n` : `${stringify(redacted)}\n`
}
