// Node only: `latchkey-service export-users --organization-id ID (--data-dir DIR | --database-url
// URL) [--to FILE]`: the organization's users and their public data as JSONL in the format of
// `import` (no secret: wallets and keys stay with their owners, who export them themselves).

import { once } from 'node:events'
import { createWriteStream, openSync, type WriteStream } from 'node:fs'
import { exportUsers } from '../importing/exportUsers.ts'
import { dataLocation, openExistingStore, readFlags } from './commandLine.ts'
import { UsageError } from './parseDevFlags.ts'

const USAGE = `Usage: latchkey-service export-users --organization-id <id> (--data-dir <dir> | --database-url <url>)
         [--to <file>]

Writes one JSON line per user of <id>'s sub-organizations (stdout, or <file>, a new file made mode 0600):
externalId (the import's, else the sub-organization id), userName, verified e-mail and phone,
OAuth identities, passkeys (credential id and COSE public key) and the addresses of the user's
wallets and keys. No secret: \`latchkey-service import\` takes the file back as it is.`

/**
 * `to`, made mode 0600 and opened exclusively: a file already there (which would keep its own,
 * maybe looser, mode) or a symlink (which would be written through) is refused. The export names
 * people: their contacts and identities.
 */
function newFile(to: string): WriteStream {
  let fd: number
  try {
    fd = openSync(to, 'wx', 0o600)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new Error(
        `export-users: ${to} exists; the export never replaces a file (nor writes through a symlink): name a new one`,
      )
    throw error
  }
  return createWriteStream(to, { fd })
}

/** Runs `export-users` with the arguments after its name. */
export async function run(argv: string[]): Promise<void> {
  const values = readFlags('export-users', argv, {
    strings: ['organization-id', 'data-dir', 'database-url', 'to'],
    booleans: ['help'],
  })
  if (values.help) {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  const organizationId = values['organization-id']
  if (organizationId === undefined) throw new UsageError(`export-users: pass --organization-id\n\n${USAGE}`)
  const location = dataLocation('export-users', values)
  const store = await openExistingStore(location, 2)
  const out: WriteStream | NodeJS.WriteStream = values.to ? newFile(values.to) : process.stdout
  try {
    if (!(await store.get('organizations', organizationId)))
      throw new Error(`export-users: no organization ${organizationId} in this database`)
    const count = await exportUsers(store, organizationId, async (user) => {
      if (!out.write(`${JSON.stringify(user)}\n`)) await once(out, 'drain')
    })
    if (values.to) process.stderr.write(`exported ${count} users to ${values.to}\n`)
  } finally {
    if (values.to) await new Promise<void>((resolve) => (out as WriteStream).end(resolve))
    await store.close()
  }
}
