// Node only: reads the operator's configuration (TOML file < LATCHKEY_* env vars < flags) and
// validates it against `configSchema`, with one message per problem naming where it is.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { parse, TomlError } from 'smol-toml'
import { z } from 'zod'
import { ConfigError } from './ConfigError.ts'
import { type Config, type ConfigKey, configKeys, configSchema, schemaAt, unwrap } from './configSchema.ts'

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

/** A secret file's text without its trailing newline. */
function readSecretFile(path: string, where: string): string {
  const { bytes } = readLimited(path, MAX_SECRET_FILE_BYTES, where)
  const text = decodeUtf8(bytes, where).replace(/\s+$/, '')
  if (text === '') throw new ConfigError([`${where}: ${path} is empty`])
  return text
}

/** Loads, merges and validates the configuration; throws `ConfigError` listing every problem. */
export function loadConfig(input: ConfigInput = {}): LoadedConfig {
  const env = input.env ?? process.env
  const file = input.file
  const sources = new Map<string, string>()
  const problems: string[] = []
  const at = (path: string) => (file ? `${file}: ${path}` : path)

  let root: Table = {}
  let worldReadable = false
  if (file !== undefined) ({ table: root, worldReadable } = readConfigFile(file))
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

  const set = (key: ConfigKey, value: unknown, source: string) => {
    const table = tableAt(key.path.slice(0, -1), true)
    if (!table) return
    table[key.path.at(-1)!] = value
    sources.set(key.path.join('.'), source)
  }

  for (const key of keys) {
    if (key.env === undefined) continue
    const path = key.path.join('.')
    const name = key.path.at(-1)!
    const table = tableAt(key.path.slice(0, -1), false)
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
        else
          try {
            // Relative to the configuration file, so a file and its secrets can move together.
            const secretPath = file === undefined ? secretFile : resolve(dirname(file), secretFile)
            set(key, readSecretFile(secretPath, at(`${path}_file`)), `file ${secretFile}`)
          } catch (error) {
            if (!(error instanceof ConfigError)) throw error
            problems.push(...error.problems)
          }
      } else if (table[name] !== undefined && worldReadable)
        problems.push(
          `${at(path)}: a secret written in a file every local user can read; move it to ${name}_file or ${key.env}, or chmod 600 ${file}`,
        )
    }
    const fromEnv = env[key.env]
    if (fromEnv !== undefined && fromEnv !== '')
      set(key, key.secret ? fromEnv : coerce(key, fromEnv), `env ${key.env}`)
    const fromEnvFile = key.secret ? env[`${key.env}_FILE`] : undefined
    if (fromEnvFile !== undefined && fromEnvFile !== '')
      try {
        set(key, readSecretFile(fromEnvFile, `${key.env}_FILE`), `file ${fromEnvFile}`)
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error
        problems.push(...error.problems)
      }
  }
  for (const [path, raw] of Object.entries(input.flags ?? {})) {
    if (raw === undefined) continue
    const key = keys.find((candidate) => candidate.path.join('.') === path)
    if (!key) throw new Error(`no configuration key ${path}`)
    set(key, coerce(key, raw), `flag ${flagName(path)}`)
  }

  const parsed = configSchema.safeParse(root, { reportInput: true })
  if (!parsed.success)
    for (const issue of parsed.error.issues) problems.push(...describeIssue(issue, keys, sources, file))
  if (problems.length > 0) throw new ConfigError(problems)
  const config = parsed.data!
  if (config.storage.database_url !== undefined && config.storage.data_dir !== undefined)
    throw new ConfigError([
      `${at('storage')}: database_url and data_dir are two places for the same data; set one of them`,
    ])
  return { config, file, sources }
}

/** `server.port` → `--port`: the flags `start` and `init` take for keys. */
export const FLAG_KEYS: Record<string, string> = {
  host: 'server.host',
  port: 'server.port',
  'data-dir': 'storage.data_dir',
  'database-url': 'storage.database_url',
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
  const key = keys.find(
    (candidate) =>
      candidate.path.length <= path.length &&
      candidate.path.every((name, i) => name === path[i] || name.startsWith('<')),
  )
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
              (candidate) => candidate.secret && candidate.path.join('.') === [...path, name].join('.'),
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
  const got =
    !secret && (typeof input === 'string' || typeof input === 'number' || typeof input === 'boolean')
      ? `, got ${truncate(JSON.stringify(input))}`
      : ''
  return [`${where}: ${issue.message}${got}`]
}

const truncate = (text: string) => (text.length > 80 ? `${text.slice(0, 77)}...` : text)
