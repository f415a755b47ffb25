// Node only: `latchkey-service migrate --data-dir D | --database-url URL`: applies the pending
// migrations and exits, printing what it did, so that a deployment migrates once, as its own step,
// and then starts every instance with `--no-migrate`.
import { openDataDir, openPostgres } from '../kernel/store/durableStores.ts'
import { knownMigrations } from '../kernel/store/migrations.ts'
import { dataLocation, readFlags } from './commandLine.ts'

const USAGE = `Usage: latchkey-service migrate (--data-dir <dir> | --database-url <url>)

Brings the database's schema to this version and exits. On a data dir, stop the service first (a
data dir has one process); on PostgreSQL, instances may keep serving (migrations only add).`

/** Runs `migrate` with the arguments after its name. */
export async function run(argv: string[]): Promise<void> {
  const values = readFlags('migrate', argv, { strings: ['data-dir', 'database-url'], booleans: ['help'] })
  if (values.help) {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  const location = dataLocation('migrate', values)
  const store =
    'dataDir' in location
      ? await openDataDir(location.dataDir)
      : await openPostgres(location.databaseUrl, { max: 1 })
  try {
    const where = 'dataDir' in location ? location.dataDir : 'the PostgreSQL database'
    if (store.migrated.length === 0)
      process.stdout.write(
        `${where} is current: nothing to apply (${knownMigrations(store.backend).join(', ')})\n`,
      )
    else for (const name of store.migrated) process.stdout.write(`applied ${name} to ${where}\n`)
  } finally {
    await store.close()
  }
}
