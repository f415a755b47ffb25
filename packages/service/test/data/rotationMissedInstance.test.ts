// A master-key rotation on PostgreSQL while an instance that was not restarted with the new key
// (docs/operations.md step 2 missed on one host) keeps serving: it reads the keyring every second,
// sees an active version it does not hold, and from then on seals nothing (503) and answers
// /readyz 503 until restarted with the key. It once went on sealing new secrets under the old
// version, which the rotation then retired and the operator destroyed: wallets made after the
// rotation could never be opened again.
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { KEYRING_ID } from '../../src/assembly/keyring.ts'
import { sealedVersion } from '../../src/kernel/crypto/sealer.ts'
import { openPostgres } from '../../src/kernel/store/durableStores.ts'
import type { Store } from '../../src/kernel/store/Store.ts'
import { createHarness, type Harness, resultOf } from '../../src/testing/harness.ts'
import { ETHEREUM_ACCOUNT } from '../../src/testing/testKeys.ts'
import { runCommand } from '../data/runCommand.ts'
import { type PostgresCluster, startPostgres } from '../durability/postgres.ts'
import { removeDir, tempDir } from '../durability/tempDir.ts'

let cluster: PostgresCluster | undefined
let harness: Harness | undefined
const keysDir = tempDir('rotate-missed')
afterAll(async () => {
  await harness?.service.close().catch(() => undefined)
  await cluster?.dispose()
  removeDir(keysDir)
}, 120_000)

/** Every sealed value's version in the store. */
async function sealedVersions(store: Store): Promise<number[]> {
  const versions: number[] = []
  JSON.stringify(await store.dump(), (_key, value: unknown) => {
    if (typeof value === 'string') {
      const version = sealedVersion(value)
      if (version !== undefined) versions.push(version)
    }
    return value
  })
  return versions
}

describe('master-key rotation with an instance that lacks the new key', () => {
  it('never leaves a secret sealed under a retired master-key version', { timeout: 300_000 }, async () => {
    cluster = await startPostgres()
    const oldKey = randomBytes(32)
    const newKey = randomBytes(32)
    const newKeyFile = join(keysDir, 'new.key')
    writeFileSync(newKeyFile, newKey.toString('hex'), { mode: 0o600 })

    // An instance started with the key in use only (not restarted with --new-master-key-file).
    harness = await createHarness({
      store: await openPostgres(cluster.url),
      masterKey: new Uint8Array(oldKey),
    })
    resultOf(
      'create_wallet',
      await harness.submit('create_wallet', { walletName: 'before', accounts: [ETHEREUM_ACCOUNT] }),
    )
    harness.clock.advance(1)

    // The operator runs the rotation; it registers the new key itself and finishes.
    const rotation = await runCommand(
      [
        'rotate-master-key',
        '--database-url',
        cluster.url,
        '--new-key-file',
        newKeyFile,
        '--settle-seconds',
        '2',
      ],
      { LATCHKEY_MASTER_KEY: oldKey.toString('hex') },
    )
    // Let the instance's keyring follower tick (it reads the keyring every second).
    await new Promise((resolve) => setTimeout(resolve, 2_500))

    // The instance, still serving, creates a wallet after the rotation said it was done.
    const after = await harness.submit('create_wallet', {
      walletName: 'after',
      accounts: [ETHEREUM_ACCOUNT],
    })

    const keyring = await harness.service.store.get('keyring', KEYRING_ID)
    const retired = new Set(
      (keyring?.keys ?? []).filter((entry) => entry.retiredAt !== undefined).map((entry) => entry.version),
    )
    const underRetired = (await sealedVersions(harness.service.store)).filter((v) => retired.has(v))
    expect(rotation.code, rotation.stderr).toBe(0)
    expect(keyring?.activeVersion).toBe(2)
    // The instance refuses what would seal (the wallet) with a 503 saying why, and is not ready.
    expect(after.status).toBe(503)
    expect(JSON.stringify(after.body)).toContain('does not hold the active master key')
    expect(await harness.service.readiness()).toMatchObject({ ready: false, checks: { masterKey: false } })
    expect(underRetired).toEqual([])
  })
})
