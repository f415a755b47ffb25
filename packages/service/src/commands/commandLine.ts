// Node only: what the operator commands (`migrate`, `backup`, `restore`, `rotate-master-key`) share:
// their flags, read strictly, where their data is, its master key and its store.
import { parseArgs } from 'node:util'
import { loadMasterKey, loadMasterKeyFile, openDataDir, openPostgres } from '../kernel/store/durableStores.ts'
import type { Store } from '../kernel/store/Store.ts'
import { UsageError } from './parseDevFlags.ts'

/** The flags of one command: `string` flags take a value, `boolean` ones do not. */
export function readFlags<const S extends string, const B extends string = never>(
  command: string,
  argv: string[],
  flags: { strings: readonly S[]; booleans?: readonly B[] },
): { [K in S]?: string } & { [K in B]: boolean } {
  const options: Record<string, { type: 'string' | 'boolean' }> = {}
  for (const name of flags.strings) options[name] = { type: 'string' }
  for (const name of flags.booleans ?? []) options[name] = { type: 'boolean' }
  try {
    const { values } = parseArgs({ args: argv, options, strict: true, allowPositionals: false })
    for (const name of flags.strings) if (values[name] === '') throw new UsageError(`--${name} needs a value`)
    const result: Record<string, unknown> = { ...values }
    for (const name of flags.booleans ?? []) result[name] = values[name] === true
    return result as { [K in S]?: string } & { [K in B]: boolean }
  } catch (error) {
    throw new UsageError(`${command}: ${(error as Error).message}`)
  }
}

/** Where a command's data is: `--data-dir` or `--database-url` (env `LATCHKEY_DATABASE_URL`), one of them. */
export function dataLocation(
  command: string,
  values: { 'data-dir'?: string; 'database-url'?: string },
  env: Record<string, string | undefined> = process.env,
): { dataDir: string } | { databaseUrl: string } {
  const databaseUrl = values['database-url'] ?? (env.LATCHKEY_DATABASE_URL || undefined)
  const dataDir = values['data-dir']
  if (dataDir !== undefined && databaseUrl !== undefined)
    throw new UsageError(
      `${command}: --data-dir and --database-url are two places for the same data; pick one`,
    )
  if (dataDir !== undefined) return { dataDir }
  if (databaseUrl !== undefined) {
    if (!/^postgres(ql)?:\/\/./.test(databaseUrl))
      throw new UsageError(
        `${command}: --database-url must be a PostgreSQL URL like postgres://user@127.0.0.1:5432/latchkey`,
      )
    return { databaseUrl }
  }
  throw new UsageError(`${command}: pass --data-dir <dir> or --database-url <url>`)
}

/** Where a command's data is (`dataLocation`'s answer). */
export type DataLocation = ReturnType<typeof dataLocation>

/**
 * The master key in use for `location`: `--master-key-file`, else the data dir's own key file, else
 * `LATCHKEY_MASTER_KEY` for a database URL; undefined when none is given (each command says what
 * to pass).
 */
export function masterKeyInUse(
  location: DataLocation,
  masterKeyFile: string | undefined,
  env: Record<string, string | undefined> = process.env,
): Uint8Array | undefined {
  if (masterKeyFile !== undefined) return loadMasterKeyFile(masterKeyFile)
  if ('dataDir' in location) return loadMasterKey(location.dataDir)
  return env.LATCHKEY_MASTER_KEY !== undefined ? loadMasterKey('.', env.LATCHKEY_MASTER_KEY) : undefined
}

/** Opens the store at `location` as it is (no migration), with at most `max` PostgreSQL connections. */
export function openExistingStore(location: DataLocation, max: number): Promise<Store> {
  return 'dataDir' in location
    ? openDataDir(location.dataDir, { migrate: false })
    : openPostgres(location.databaseUrl, { migrate: false, max })
}
