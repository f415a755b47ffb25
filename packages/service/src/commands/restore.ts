// Node only: `latchkey-service restore --from FILE --data-dir NEW`: a backup made by `backup`
// becomes a new data dir (never an existing one's files), checked and migrated to this version.
import { constants, copyFileSync, existsSync, mkdirSync, readdirSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import { checkDatabaseFile, DATABASE_FILE, openDataDir } from '../kernel/store/durableStores.ts'
import { lockDataDir } from '../kernel/store/lockDataDir.ts'
import { readFlags } from './commandLine.ts'

const USAGE = `Usage: latchkey-service restore --from <file> --data-dir <new dir>

Makes <new dir> (which must be missing or empty) a data dir holding the backup <file>. Start the
service on it with the master key the backup's secrets were sealed under (--master-key-file, or
copy the key file to <new dir>/master.key).`

/** Runs `restore` with the arguments after its name. */
export async function run(argv: string[]): Promise<void> {
  const values = readFlags('restore', argv, { strings: ['from', 'data-dir'], booleans: ['help'] })
  if (values.help) {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  const from = values.from
  const dir = values['data-dir']
  if (from === undefined || dir === undefined)
    throw new Error('restore: pass --from <file> and --data-dir <new dir>')
  if (!existsSync(from)) throw new Error(`${from} does not exist`)
  if (existsSync(dir) && readdirSync(dir).length > 0)
    throw new Error(`${dir} is not empty; restore into a new data dir (nothing was changed)`)
  checkDatabaseFile(from)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const lock = await lockDataDir(dir)
  const temp = join(dir, `${DATABASE_FILE}.restoring`)
  // Created, never opened through a symlink or over a file something else put there.
  copyFileSync(from, temp, constants.COPYFILE_EXCL)
  renameSync(temp, join(dir, DATABASE_FILE))
  // Opening it checks it again, brings it to this version's schema and makes it a WAL database.
  const store = await openDataDir(dir, { lock })
  const applied = store.migrated
  await store.close()
  process.stdout.write(
    `restored ${from} into ${dir}${applied.length > 0 ? ` (applied ${applied.join(', ')})` : ''}; start the service on it with the master key the backup was sealed under\n`,
  )
}
