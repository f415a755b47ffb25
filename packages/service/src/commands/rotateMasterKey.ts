// Node only: `latchkey-service rotate-master-key --new-key-file F (--data-dir D | --database-url
// URL)`: re-seals every secret under a new master key while instances keep serving (PostgreSQL),
// resuming an interrupted rotation, then retires the old key.
import { readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { KEYRING_ID, planKeyring } from '../assembly/keyring.ts'
import { createSealer, masterKeyCheck } from '../kernel/crypto/sealer.ts'
import type { Store } from '../kernel/store/Store.ts'
import { dataLocation, masterKeyInUse, openExistingStore, readFlags } from './commandLine.ts'
import { rotateSecrets } from './rotateSecrets.ts'

const USAGE = `Usage: latchkey-service rotate-master-key --new-key-file <file> (--data-dir <dir> | --database-url <url>)
         [--master-key-file <file>] [--batch-size <n>] [--settle-seconds <n>]

Re-seals every secret under the key in <file> (64 hex chars; make it with
\`umask 077; openssl rand -hex 32 > new.key\`). The key in use comes as for the service:
--master-key-file, env LATCHKEY_MASTER_KEY, or <data-dir>/master.key.

PostgreSQL: first restart every instance with --new-master-key-file <file> as well, then run this
while they serve; afterwards restart them with only the new key. A data dir: stop the service
first; its master.key is replaced by the new key when it was the key in use.
An interrupted rotation resumes when run again with the same keys.`

/** A key file that must exist (the new key is never made up here: instances need the same one). */
function readKeyFile(path: string): Uint8Array {
  const text = readFileSync(path, 'utf8').trim()
  if (!/^[0-9a-f]{64}$/i.test(text)) throw new Error(`${path} is not a 64-hex-character key`)
  return Uint8Array.from(Buffer.from(text, 'hex'))
}

/** Runs `rotate-master-key` with the arguments after its name. */
export async function run(argv: string[]): Promise<void> {
  const values = readFlags('rotate-master-key', argv, {
    strings: ['data-dir', 'database-url', 'master-key-file', 'new-key-file', 'batch-size', 'settle-seconds'],
    booleans: ['help'],
  })
  if (values.help) {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  const location = dataLocation('rotate-master-key', values)
  const newKeyFile = values['new-key-file']
  if (newKeyFile === undefined) throw new Error('rotate-master-key: pass --new-key-file <file>')
  const batchSize = Number(values['batch-size'] ?? 100)
  const settleSeconds = Number(values['settle-seconds'] ?? 5)
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new Error('--batch-size must be a positive number')
  if (!Number.isFinite(settleSeconds) || settleSeconds < 0)
    throw new Error('--settle-seconds must be a number of seconds')
  const current = masterKeyInUse(location, values['master-key-file'])
  if (!current)
    throw new Error(
      'rotate-master-key: pass the key in use with --master-key-file <file> or LATCHKEY_MASTER_KEY',
    )
  const next = readKeyFile(newKeyFile)
  const store = await openExistingStore(location, 2)
  try {
    const to = await registerKeys(store, current, next)
    const sealer = createSealer((await planFor(store, current, next)).keys)
    let pass = 0
    const result = await rotateSecrets(store, sealer, {
      to,
      batchSize,
      // One process writes a data dir: nobody else seals under the old key meanwhile.
      settleMs: 'dataDir' in location ? 0 : settleSeconds * 1000,
      onStep: (state) => {
        if (state.pass !== pass) {
          pass = state.pass
          process.stdout.write(`pass ${pass}: ${state.resealed} secrets re-sealed so far\n`)
        }
      },
    })
    if ('dataDir' in location)
      await finishDataDir(store, {
        dir: location.dataDir,
        masterKeyFile: values['master-key-file'],
        current,
        next,
      })
    process.stdout.write(
      `re-sealed ${result.resealed} secrets under master key version ${to}` +
        (result.retired.length > 0 ? `; retired version ${result.retired.join(', ')}` : '') +
        '.\nRestart every instance with only the new key, then destroy the old one.\n',
    )
  } finally {
    await store.close()
  }
}

/** The keyring's view of the two keys (the current one must be known to it or be its first). */
async function planFor(store: Store, current: Uint8Array, next: Uint8Array) {
  return planKeyring(await store.get('keyring', KEYRING_ID), [current, next], Date.now())
}

/**
 * Checks that the current key opens the stored secrets, registers the new key's version if the
 * keyring does not know it (as an instance given both keys does), and returns that version.
 */
async function registerKeys(store: Store, current: Uint8Array, next: Uint8Array): Promise<number> {
  const plan = await planFor(store, current, next)
  const service = await store.get('service', 'service')
  if (service) createSealer(plan.keys).open(service.sealedSignerKey).fill(0)
  if (plan.write)
    await store.transaction(async (tx) => {
      const again = planKeyring(await tx.get('keyring', KEYRING_ID), [current, next], Date.now())
      if (again.write) await tx.put('keyring', again.write)
    })
  const check = masterKeyCheck(next)
  const row = await store.get('keyring', KEYRING_ID)
  const version = row?.keys.find((entry) => entry.check === check)?.version
  if (version === undefined) throw new Error('the new key could not be registered')
  return version
}

/**
 * A data dir after its rotation: the old ciphertexts leave the file (`store.compact()`: SQLite's
 * VACUUM rewrites it, the WAL is checkpointed and truncated), and the data dir's own master.key, when it held the old key,
 * is replaced by the new one.
 */
async function finishDataDir(
  store: Store,
  {
    dir,
    masterKeyFile,
    current,
    next,
  }: { dir: string; masterKeyFile: string | undefined; current: Uint8Array; next: Uint8Array },
): Promise<void> {
  await store.compact()
  if (masterKeyFile !== undefined || process.env.LATCHKEY_MASTER_KEY !== undefined) return
  const path = join(dir, 'master.key')
  if (masterKeyCheck(readKeyFile(path)) !== masterKeyCheck(current)) return
  const temp = `${path}.${process.pid}.tmp`
  writeFileSync(temp, Buffer.from(next).toString('hex'), { mode: 0o600, flush: true })
  renameSync(temp, path)
  process.stdout.write(`${path} now holds the new key\n`)
}
