// Node only: reads the operator's configuration (TOML file < LATCHKEY_* env vars < flags) and
// validates it against `configSchema`, with one message per problem naming where it is.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { parse, TomlError } from 'smol-toml'
import { z } from 'zod'
import { ConfigError } from './ConfigError.ts'
import {
  type Config,
  type ConfigKey,
  configKeys,
  configSchema,
  entryEnvName,
  schemaAt,
  unwrap,
} from './configSchema.ts'
import { REDACTED, redactUrl, redactUrlCredentials } from './printConfig.ts'

/** Largest configuration file read: a real one is a few KB; anything bigger is a mistake. */
export const MAX_CONFIG_BYTES = 1024 * 1024
/** Largest secret file (`*_file`) read. */
export const MAX_SECRET_FILE_BYTES = 64 * 1024

export interface ConfigInput {
  /** The TOML file (`--config`, env `LATCHKEY_CONFIG`); without one, env vars and flags only. */
  file?: string | undefined
  /** @default process.env */
  env?: Record<string, string | undefined>
  /** Values from flags by key path (`'server.port'`), as typed on the command line. */
  flags?: Record<string, string | undefined>
}

export interface LoadedConfig {
  config: Config
  file: string | undefined
  /** Where each key that was set came from (`'file'`, `'env LATCHKEY_X'`, `'flag --port'`, `'file /run/secrets/x'`). */
  sources: Map<string, string>
}

type Table = Record<string, unknown>

const isTable = (value: unknown): value is Table =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date)

/** Reads at most `limit + 1` bytes of a file, with its mode; throws a one-line message. */
function readLimited(path: string, limit: number, what: string): { bytes: Uint8Array; mode: number } {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch (error) {
    throw new ConfigError([
      `${what}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
    ])
  }
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile()) throw new ConfigError([`${what}: ${path} is not a file`])
    if (stat.size > limit)
      throw new ConfigError([
        `${what}: ${path} is ${formatBytes(stat.size)}; at most ${formatBytes(limit)} is read (is this the right file?)`,
      ])
    const bytes = new Uint8Array(stat.size)
    let read = 0
    while (read < bytes.length) {
      const n = readSync(fd, bytes, read, bytes.length - read, read)
      if (n === 0) break
      read += n
    }
    return { bytes: bytes.subarray(0, read), mode: stat.mode }
  } finally {
    closeSync(fd)
  }
}

function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1).replace(/\.0$/, '')} MB`
  if (n >= 1024) return `${Math.round(n / 1024)} KB`
  return `${n} bytes`
}

function decodeUtf8(bytes: Uint8Array, what: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw new ConfigError([
      `${what}: not UTF-8 text (invalid byte at offset ${firstInvalidUtf8(bytes)}); save it as UTF-8`,
    ])
  }
}

/** Offset of the first byte that does not begin a well-formed UTF-8 sequence. */
function firstInvalidUtf8(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; ) {
    const lead = bytes[i]!
    const length =
      lead < 0x80
        ? 1
        : lead >= 0xc2 && lead <= 0xdf
          ? 2
          : lead >= 0xe0 && lead <= 0xef
            ? 3
            : lead >= 0xf0 && lead <= 0xf4
              ? 4
              : 0
    if (length === 0) return i
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(i, i + length))
    } catch {
      return i
    }
    i += length
  }
  return bytes.length
}

/** Reads and parses the TOML file. */
function readConfigFile(file: string): { table: Table; worldReadable: boolean } {
  const { bytes, mode } = readLimited(file, MAX_CONFIG_BYTES, file)
  const text = decodeUtf8(bytes, file)
  let table: Table
  try {
    table = parse(text) as Table
  } catch (error) {
    if (error instanceof TomlError)
      throw new ConfigError([
        `${file}:${error.line}:${error.column}: not valid TOML: ${error.message.split('\n')[0]!.replace(/^Invalid TOML document: /, '')}`,
      ])
    throw new ConfigError([`${file}: not valid TOML`])
  }
  return { table, worldReadable: (mode & 0o004) !== 0 }
}

/** A value typed on the command line or in an env var, as the key's type wants it. */
function coerce(key: ConfigKey, raw: string): unknown {
  const type = key.schema.def.type
  if (type === 'number') return /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : raw
  if (type === 'array')
    return raw
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean)
  if (type === 'boolean') return raw === 'true' ? true : raw === 'false' ? false : raw
  return raw
}

/** A secret file's text without its trailing newline, and its mode. */
function readSecretFile(path: string, where: string): { text: string; mode: number } {
  const { bytes, mode } = readLimited(path, MAX_SECRET_FILE_BYTES, where)
  const text = decodeUtf8(bytes, where).replace(/\s+$/, '')
  if (text === '') throw new ConfigError([`${where}: ${path} is empty`])
  return { text, mode }
}

/**
 * What to say of a secret file every local user can read. A warning, not a refusal: a Docker or
 * Kubernetes secret is mounted 0444 (or 0644) by default, readable only inside its container.
 */
function readableByAll(path: string, where: string, mode: number): string | undefined {
  if ((mode & 0o004) === 0) return undefined
  return `${where}: ${path} can be read by every local user (mode ${(mode & 0o777).toString(8)}): chmod 600 it, owned by the service's user (a container's mounted secret, readable only inside it, may stay as it is)`
}

/** Loads, merges and validates the configuration; throws `ConfigError` listing every problem. */
export function loadConfig(input: ConfigInput = {}): LoadedConfig {
  const { loaded, problems } = inspectConfig(input)
  if (problems.length > 0 || !loaded) throw new ConfigError(problems)
  return loaded
}

/** A key as it stands in this configuration: a record's entries each once (`sponsors.default.private_key`). */
interface ConcreteKey {
  key: ConfigKey
  path: string[]
  env: string | undefined
}

/**
 * Loads, merges and validates the configuration, collecting every problem instead of stopping at
 * the first: `loaded` is there whenever the merged configuration fits the schema (so `config check`
 * can print it and add `start`'s refusals), even if a secret was written where others can read it.
 */
export function inspectConfig(input: ConfigInput = {}): {
  loaded: LoadedConfig | undefined
  problems: string[]
  /** What the service runs with but should not: a secret file every local user can read. */
  warnings: string[]
} {
  const env = input.env ?? process.env
  const file = input.file
  const sources = new Map<string, string>()
  const problems: string[] = []
  const warnings: string[] = []
  const at = (path: string) => (file ? `${file}: ${path}` : path)

  let root: Table = {}
  let worldReadable = false
  try {
    if (file !== undefined) ({ table: root, worldReadable } = readConfigFile(file))
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    return { loaded: undefined, problems: error.problems, warnings }
  }
  const keys = configKeys()
  /** The table at `path` (made when `create`), or undefined where something else stands. */
  const tableAt = (path: string[], create: boolean): Table | undefined => {
    let table = root
    for (const name of path) {
      if (table[name] === undefined && create) table[name] = {}
      const next = table[name]
      if (!isTable(next)) return undefined
      table = next
    }
    return table
  }
  const recordFileSources = (table: Table, path: string[]) => {
    for (const [name, value] of Object.entries(table))
      if (isTable(value)) recordFileSources(value, [...path, name])
      else sources.set([...path, name].join('.'), 'file')
  }
  recordFileSources(root, [])

  const set = (path: string[], value: unknown, source: string) => {
    const table = tableAt(path.slice(0, -1), true)
    if (!table) return
    table[path.at(-1)!] = value
    sources.set(path.join('.'), source)
  }
  const readSecret = (path: string[], secretPath: string, where: string, source: string) => {
    try {
      const { text, mode } = readSecretFile(secretPath, where)
      set(path, text, source)
      const warning = readableByAll(secretPath, where, mode)
      if (warning) warnings.push(warning)
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error
      problems.push(...error.problems)
    }
  }

  for (const { key, path: keyPath, env: envName } of concreteKeys(keys, tableAt, env)) {
    if (envName === undefined) continue
    const path = keyPath.join('.')
    const name = keyPath.at(-1)!
    const table = tableAt(keyPath.slice(0, -1), false)
    if (key.secret && table) {
      const fileKey = `${name}_file`
      const secretFile = table[fileKey]
      if (secretFile !== undefined) {
        delete table[fileKey]
        sources.delete(`${path}_file`)
        if (table[name] !== undefined)
          problems.push(`${at(path)}: given both inline and as ${fileKey}; keep ${fileKey}`)
        else if (typeof secretFile !== 'string' || secretFile === '')
          problems.push(`${at(`${path}_file`)}: must be the path of a file holding the secret`)
        // Relative to the configuration file, so a file and its secrets can move together.
        else
          readSecret(
            keyPath,
            file === undefined ? secretFile : resolve(dirname(file), secretFile),
            at(`${path}_file`),
            `file ${secretFile}`,
          )
      } else if (table[name] !== undefined && worldReadable)
        problems.push(
          `${at(path)}: a secret written in a file every local user can read; move it to ${name}_file or ${envName}, or chmod 600 ${file}`,
        )
    }
    const fromEnv = env[envName]
    if (fromEnv !== undefined && fromEnv !== '')
      set(keyPath, key.secret ? fromEnv : coerce(key, fromEnv), `env ${envName}`)
    const fromEnvFile = key.secret ? env[`${envName}_FILE`] : undefined
    if (fromEnvFile !== undefined && fromEnvFile !== '')
      readSecret(keyPath, fromEnvFile, `${envName}_FILE`, `file ${fromEnvFile}`)
  }
  for (const [path, raw] of Object.entries(input.flags ?? {})) {
    if (raw === undefined) continue
    // A secret's `<key>_file` flag (`--master-key-file`): the file is read, as in the file.
    const secretKey = path.endsWith('_file')
      ? keys.find((candidate) => candidate.secret && `${candidate.path.join('.')}_file` === path)
      : undefined
    if (secretKey) {
      if (raw === '') problems.push(`${flagName(path)} needs the path of a file holding the secret`)
      else readSecret(secretKey.path, raw, flagName(path), `flag ${flagName(path)}`)
      continue
    }
    const key = keys.find((candidate) => candidate.path.join('.') === path)
    if (!key) throw new Error(`no configuration key ${path}`)
    set(key.path, coerce(key, raw), `flag ${flagName(path)}`)
  }

  const parsed = configSchema.safeParse(root, { reportInput: true })
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push(...describeIssue(issue, keys, sources, file))
    return { loaded: undefined, problems, warnings }
  }
  const config = parsed.data
  if (config.storage.database_url !== undefined && config.storage.data_dir !== undefined)
    problems.push(
      `${at('storage')}: database_url and data_dir are two places for the same data; set one of them`,
    )
  return { loaded: { config, file, sources }, problems, warnings }
}

/**
 * Every key as it stands in this configuration, with its env var: a record of tables' entries
 * (`sponsorship.sponsors.<name>.private_key`) once per entry the file has or an env var names
 * (`LATCHKEY_SPONSORSHIP_SPONSORS_<NAME>_PRIVATE_KEY[_FILE]`). Only secrets of entries are given
 * env vars: the file holds the rest of an entry.
 */
function concreteKeys(
  keys: ConfigKey[],
  tableAt: (path: string[], create: boolean) => Table | undefined,
  env: Record<string, string | undefined>,
): ConcreteKey[] {
  const concrete: ConcreteKey[] = []
  const entryIndex = (key: ConfigKey) => key.path.findIndex((name) => name.startsWith('<'))
  for (const key of keys) {
    const index = entryIndex(key)
    if (index < 0) {
      concrete.push({ key, path: key.path, env: key.env })
      continue
    }
    if (!key.secret || index === key.path.length - 1) continue
    const recordPath = key.path.slice(0, index)
    const rest = key.path.slice(index + 1)
    const existing = Object.keys(tableAt(recordPath, false) ?? {})
    const names = new Set(existing)
    // The entries env vars name: the longest key suffix wins (`…_SOLANA_PRIVATE_KEY` is not an
    // entry `…_SOLANA` of `…_PRIVATE_KEY`).
    const prefix = `${entryEnvName(recordPath)}_`
    const suffixes = keys
      .filter(
        (other) =>
          other.secret &&
          entryIndex(other) === index &&
          other.path.slice(0, index).join('.') === recordPath.join('.'),
      )
      .map((other) => `_${entryEnvName(other.path.slice(index + 1)).slice('LATCHKEY_'.length)}`)
    const own = `_${entryEnvName(rest).slice('LATCHKEY_'.length)}`
    for (const [name, value] of Object.entries(env)) {
      if (value === undefined || value === '' || !name.startsWith(prefix)) continue
      const base = name.replace(/_FILE$/, '')
      const longest = suffixes
        .filter((suffix) => base.endsWith(suffix) && base.length > prefix.length + suffix.length)
        .sort((a, b) => b.length - a.length)[0]
      if (longest !== own) continue
      const token = base.slice(prefix.length, base.length - own.length)
      names.add(
        existing.find((entry) => entryEnvName([entry]) === `LATCHKEY_${token}`) ??
          token.toLowerCase().replaceAll('_', '-'),
      )
    }
    for (const name of names) {
      const path = [...recordPath, name, ...rest]
      concrete.push({ key, path, env: entryEnvName(path) })
    }
  }
  return concrete
}

/** `server.port` → `--port`: the flags `start` and `init` take for keys. */
export const FLAG_KEYS: Record<string, string> = {
  host: 'server.host',
  port: 'server.port',
  'data-dir': 'storage.data_dir',
  'database-url': 'storage.database_url',
  'master-key-file': 'master_key.key_file',
  'new-master-key-file': 'master_key.next_key_file',
}

const flagName = (path: string) =>
  `--${Object.entries(FLAG_KEYS).find(([, keyPath]) => keyPath === path)?.[0] ?? path}`

/** One line per key an issue is about, naming where it came from. */
function describeIssue(
  issue: z.core.$ZodIssue,
  keys: ConfigKey[],
  sources: Map<string, string>,
  file: string | undefined,
): string[] {
  const path = issue.path.map(String)
  // The most particular key the path is in (an entry's `private_key`, not the entry).
  const key = keys
    .filter((candidate) => candidate.path.length <= path.length && pathMatches(candidate.path, path))
    .sort((a, b) => b.path.length - a.path.length)[0]
  const source = sources.get((key ? path.slice(0, key.path.length) : path).join('.'))
  const label = path.join('.').replace(/\.(\d+)(?=\.|$)/g, '[$1]')
  const where =
    source === undefined || source === 'file' || source.startsWith('file ')
      ? `${file ?? 'configuration'}: ${label || '(top level)'}`
      : `${source.replace(/^(env|flag) /, '')} (${label})`
  if (issue.code === 'unrecognized_keys') {
    const table = schemaAt(path)
    const inner = table ? unwrap(table) : undefined
    const allowed =
      inner instanceof z.ZodObject
        ? Object.keys(inner.shape).flatMap((name) =>
            keys.some(
              (candidate) =>
                candidate.secret &&
                candidate.path.length === path.length + 1 &&
                pathMatches(candidate.path, [...path, name]),
            )
              ? [name, `${name}_file`]
              : [name],
          )
        : []
    return issue.keys.map(
      (name) =>
        `${file ?? 'configuration'}: ${[...path, name].join('.')}: unknown key (allowed ${path.length === 0 ? 'sections' : `in [${path.join('.')}]`}: ${allowed.join(', ')})`,
    )
  }
  if (issue.code === 'invalid_type' && issue.expected === 'object')
    return [`${where}: must be a table ([${label}] or ${label} = { … })`]
  if (issue.code === 'invalid_key') return [`${where}: ${issue.issues[0]?.message ?? issue.message}`]
  const secret = key?.secret === true
  const input = (issue as { input?: unknown }).input
  // A value shown as `config print` shows it (an [rpc] node's key in its path, another URL's
  // credentials, query and fragment redacted), before it is cut: a cut URL no longer parses.
  const shown =
    typeof input !== 'string' ? input : path[0] === 'rpc' ? redactUrl(input) : redactUrlCredentials(input)
  // A string the redaction left an `@`, `?` or `#` in (a URL mistyped: `relay:PW@host`, `//u:PW@…`,
  // `<https://u:PW@…>`, quoted) may still hold a credential: named, not quoted.
  const unsure =
    typeof shown === 'string' &&
    /[@?#]/.test(
      shown.replaceAll(`${REDACTED}@`, '').replaceAll(`?${REDACTED}`, '').replaceAll(`#${REDACTED}`, ''),
    )
  const got =
    secret || (typeof shown !== 'string' && typeof shown !== 'number' && typeof shown !== 'boolean')
      ? ''
      : unsure
        ? ' (the value is not shown: it may hold a credential)'
        : `, got ${truncate(JSON.stringify(shown))}`
  return [`${where}: ${issue.message}${got}`]
}

/** Whether a key's path (`<name>` standing for any entry) is a prefix of `path`. */
const pathMatches = (keyPath: string[], path: string[]) =>
  keyPath.every((name, i) => name === path[i] || (name.startsWith('<') && path[i] !== undefined))

const truncate = (text: string) => (text.length > 80 ? `${text.slice(0, 77)}...` : text)
