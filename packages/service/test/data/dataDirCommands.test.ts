// The data-dir side of the operator commands as an operator runs them: `backup` with no service
// holding the data dir, and `rotate-master-key` on a stopped data dir, after which its master.key
// holds the new key, the old key's bytes are in no file of the data dir, and a wallet signs.
import { randomBytes } from 'node:crypto'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createService } from '../../src/assembly/createService.ts'
import { loadMasterKey, openDataDir } from '../../src/kernel/store/durableStores.ts'
import { createHarness, resultOf } from '../../src/testing/harness.ts'
import { ETHEREUM_ACCOUNT } from '../../src/testing/testKeys.ts'
import { removeDir, tempDir } from '../durability/tempDir.ts'
import { runCommand } from './runCommand.ts'

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) removeDir(dir)
})

/** Every file under `dir`, recursively. */
function filesOf(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesOf(join(dir, entry.name)) : [join(dir, entry.name)],
  )
}

describe('operator commands on a data dir', { timeout: 300_000 }, () => {
  it('backup copies a data dir no service holds, and the copy restores', async () => {
    const root = tempDir('offline-backup')
    dirs.push(root)
    const dataDir = join(root, 'data')
    await (
      await createService({ store: await openDataDir(dataDir), masterKey: loadMasterKey(dataDir) })
    ).close()
    const file = join(root, 'copy.sqlite')
    const backup = await runCommand(['backup', '--data-dir', dataDir, '--to', file])
    expect(backup.stderr).toBe('')
    expect(backup.stdout).toContain('written by this process (no service held the data dir)')
    const restore = await runCommand(['restore', '--from', file, '--data-dir', join(root, 'restored')])
    expect(restore.code).toBe(0)
    const service = await createService({
      store: await openDataDir(join(root, 'restored')),
      masterKey: loadMasterKey(dataDir),
    })
    await service.close()
  })

  it('rotate-master-key on a stopped data dir: master.key becomes the new key and the old key is in no file', async () => {
    const root = tempDir('rotate-dir')
    dirs.push(root)
    const dataDir = join(root, 'data')
    const oldKey = loadMasterKey(dataDir)
    const harness = await createHarness({ store: await openDataDir(dataDir), masterKey: oldKey })
    const wallet = resultOf(
      'create_wallet',
      await harness.submit('create_wallet', { walletName: 'kept', accounts: [ETHEREUM_ACCOUNT] }),
    )
    await harness.service.close()
    const newKey = randomBytes(32).toString('hex')
    const newKeyFile = join(root, 'new.key')
    writeFileSync(newKeyFile, newKey, { mode: 0o600 })
    const rotation = await runCommand(
      ['rotate-master-key', '--data-dir', dataDir, '--new-key-file', newKeyFile],
      {
        LATCHKEY_MASTER_KEY: undefined,
      },
    )
    expect(rotation.stderr).toBe('')
    expect(rotation.code).toBe(0)
    expect(rotation.stdout).toContain('master.key now holds the new key')
    expect(readFileSync(join(dataDir, 'master.key'), 'utf8').trim()).toBe(newKey)
    const oldHex = Buffer.from(oldKey).toString('hex')
    for (const file of filesOf(dataDir)) {
      const bytes = readFileSync(file)
      expect({
        file,
        hex: bytes.includes(Buffer.from(oldHex)),
        raw: bytes.includes(Buffer.from(oldKey)),
      }).toEqual({
        file,
        hex: false,
        raw: false,
      })
    }
    const renewed = await createHarness({
      store: await openDataDir(dataDir),
      masterKey: loadMasterKey(dataDir),
    })
    try {
      const signed = resultOf(
        'sign_raw_payload',
        await renewed.submit('sign_raw_payload', {
          signWith: wallet.addresses[0],
          payload: '44'.repeat(32),
          encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
          hashFunction: 'HASH_FUNCTION_NO_OP',
        }),
      )
      expect(signed.r).toMatch(/^[0-9a-f]{64}$/)
    } finally {
      await renewed.service.close()
    }
  })
})
