// Node only: `latchkey-service backup --data-dir D --to FILE`: a consistent copy of a data dir's
// database, taken while the service runs (the process holding the data dir makes it) or, when
// none does, by this process. PostgreSQL is backed up with pg_dump (docs/operations.md).
import { existsSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import {
  backupDatabase,
  checkDatabaseFile,
  openDataDir,
  refuseExisting,
} from '../kernel/store/durableStores.ts'
import { askDataDirHolder, lockDataDir } from '../kernel/store/lockDataDir.ts'
import { readFlags } from './commandLine.ts'

const USAGE = `Usage: latchkey-service backup --data-dir <dir> --to <file>

Writes a consistent copy of the data dir's database to <file> (which must not exist, nor be a
symlink), while the service runs or not: ask as the user the service runs as. The copy holds secrets sealed under the master key, not the key: keep the
key (<dir>/master.key or your --master-key-file) apart from the backups. Restore with
\`latchkey-service restore --from <file> --data-dir <new dir>\`.`

/** Runs `backup` with the arguments after its name. */
export async function run(argv: string[]): Promise<void> {
  const values = readFlags('backup', argv, { strings: ['data-dir', 'to'], booleans: ['help'] })
  if (values.help) {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  const dir = values['data-dir']
  const to = values.to === undefined ? undefined : resolve(values.to)
  if (dir === undefined || to === undefined) throw new Error('backup: pass --data-dir <dir> and --to <file>')
  if (!existsSync(dir)) throw new Error(`${dir} does not exist`)
  // A symlink at <file>, even one pointing nowhere, counts as existing: the copy never goes through it.
  refuseExisting(to)
  const answer = await askDataDirHolder(dir, `backup ${JSON.stringify(to)}`)
  let by: string
  if (answer === 'free') {
    const lock = await lockDataDir(dir)
    const store = await openDataDir(dir, { lock, migrate: false })
    try {
      await backupDatabase(store, to)
    } finally {
      await store.close()
    }
    by = 'this process (no service held the data dir)'
  } else {
    if (answer !== 'ok')
      throw new Error(`the service holding ${dir} could not back it up: ${answer.replace(/^error /, '')}`)
    by = 'the service holding the data dir'
  }
  checkDatabaseFile(to)
  process.stdout.write(`backed up ${dir} to ${to} (${statSync(to).size} bytes, written by ${by})\n`)
}
