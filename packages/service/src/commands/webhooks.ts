// Node only: `latchkey-service webhooks rotate-key (--data-dir D | --database-url URL)
// [--overlap-hours H] [--master-key-file F]`: a new webhook signing key, sealed under the master
// key in use; every instance signs with it from its next try on, and the old key stays at the JWKS
// endpoint for the overlap (receivers that cached the JWKS, deliveries signed just before).
import { KEYRING_ID, planKeyring } from '../assembly/keyring.ts'
import { newId } from '../kernel/base/ids.ts'
import { createSealer } from '../kernel/crypto/sealer.ts'
import { RETIRED_KEY_PUBLISHED_MS, rotateSigningKey, SIGNING_KEY_KIND } from '../webhooks/signingKeys.ts'
import { dataLocation, masterKeyInUse, openExistingStore, readFlags } from './commandLine.ts'
import { UsageError } from './parseDevFlags.ts'

const USAGE = `Usage: latchkey-service webhooks rotate-key (--data-dir <dir> | --database-url <url>)
         [--overlap-hours <h>] [--master-key-file <file>]

Makes a new webhook signing key (Ed25519, sealed under the master key in use: --master-key-file,
env LATCHKEY_MASTER_KEY, or <data-dir>/master.key). Deliveries are signed with it from their next
try on, on every instance; the old key stays published at /public/v1/discovery/webhooks/jwks for
--overlap-hours (default ${RETIRED_KEY_PUBLISHED_MS / 3_600_000}), then leaves it. Prints the new key id.
A data dir: stop the service first (a data dir has one process); PostgreSQL: instances keep serving.`

/** Runs `webhooks <subcommand>` with the arguments after `webhooks`. */
export async function run(argv: string[]): Promise<void> {
  const [subcommand, ...rest] = argv
  if (subcommand === undefined || subcommand === '--help' || subcommand === 'help') {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  if (subcommand !== 'rotate-key')
    throw new UsageError(`webhooks: unknown subcommand ${subcommand}\n\n${USAGE}`)
  const values = readFlags('webhooks rotate-key', rest, {
    strings: ['data-dir', 'database-url', 'master-key-file', 'overlap-hours'],
    booleans: ['help'],
  })
  if (values.help) {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  const overlapHours = Number(values['overlap-hours'] ?? RETIRED_KEY_PUBLISHED_MS / 3_600_000)
  if (!Number.isFinite(overlapHours) || overlapHours < 0 || overlapHours > 24 * 30)
    throw new UsageError('webhooks rotate-key: --overlap-hours must be a number of hours from 0 to 720')
  const location = dataLocation('webhooks rotate-key', values)
  const masterKey = masterKeyInUse(location, values['master-key-file'])
  if (!masterKey)
    throw new UsageError(
      'webhooks rotate-key: pass the master key in use with --master-key-file <file> or LATCHKEY_MASTER_KEY',
    )
  const store = await openExistingStore(location, 1)
  try {
    const keyring = await store.get('keyring', KEYRING_ID)
    if (!keyring) throw new Error('webhooks rotate-key: this database was never started: no keyring')
    const plan = planKeyring(keyring, [masterKey], Date.now())
    const sealer = createSealer(plan.keys)
    // The key in use must open what is sealed (a wrong key would seal a key no instance can open).
    const service = await store.get('service', 'service')
    if (service) sealer.open(service.sealedSignerKey).fill(0)
    if ((await store.findBy('pluginRows', 'kind', SIGNING_KEY_KIND)).length === 0)
      throw new Error('webhooks rotate-key: no webhook signing key yet (start the service once first)')
    const keyId = await rotateSigningKey(
      {
        store,
        now: () => Date.now(),
        newId: () => newId(Date.now()),
        seal: (secret) => sealer.seal(secret, plan.activeVersion),
      },
      { overlapMs: Math.round(overlapHours * 3_600_000) },
    )
    process.stdout.write(
      `${keyId}\nnew webhook signing key ${keyId}; the previous key stays published for ${overlapHours} h\n`,
    )
  } finally {
    await store.close()
  }
}
