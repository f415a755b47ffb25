// Backups of a data dir: `backup` taken during a write burst, while the service holds the data
// dir, restores (`restore`) into a new data dir holding every write acknowledged before the backup
// began, consistent (its integrity check passes), and a wallet from the restored copy signs.
import { existsSync, lstatSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { askDataDirHolder } from '../../src/kernel/store/lockDataDir.ts'
import { ETHEREUM_ACCOUNT } from '../../src/testing/testKeys.ts'
import { removeDir, tempDir } from '../durability/tempDir.ts'
import { RootClient, resultOf } from '../support/RootClient.ts'
import { killAll, type ServiceProcess, startService } from '../support/serviceProcess.ts'
import { runCommand } from './runCommand.ts'

const dirs: string[] = []
const services: ServiceProcess[] = []
afterAll(async () => {
  await Promise.all(services.map((service) => service.stop()))
  killAll()
  for (const dir of dirs) removeDir(dir)
}, 60_000)

describe('backup and restore of a data dir', () => {
  it('a backup taken during a write burst restores every acknowledged write; a restored wallet signs', {
    timeout: 600_000,
  }, async () => {
    const root = tempDir('backup')
    dirs.push(root)
    const dataDir = join(root, 'data')
    const service = await startService({ name: 'original', args: ['--data-dir', dataDir] })
    services.push(service)
    const client = new RootClient(service.info)
    const first = resultOf(
      'create_wallet',
      await client.submit(service, 'create_wallet', { walletName: 'first', accounts: [ETHEREUM_ACCOUNT] }),
    )

    // The burst: wallets one after another, each name noted with when its answer came.
    let bursting = true
    const acknowledged: { name: string; at: number }[] = []
    const burst = (async () => {
      for (let i = 0; bursting; i++) {
        const name = `burst ${i}`
        const reply = await client.submit(service, 'create_wallet', {
          walletName: name,
          accounts: [ETHEREUM_ACCOUNT],
        })
        if (reply.status === 200) acknowledged.push({ name, at: performance.now() })
        else throw new Error(`create_wallet answered ${reply.status} ${JSON.stringify(reply.body)}`)
      }
    })()
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    const file = join(root, 'backups', 'latchkey.backup')
    mkdirSync(join(root, 'backups'))
    const began = performance.now()
    const backup = await runCommand(['backup', '--data-dir', dataDir, '--to', file])
    await new Promise((resolve) => setTimeout(resolve, 500))
    bursting = false
    await burst
    expect(backup.stderr).toBe('')
    expect(backup.code).toBe(0)
    expect(backup.stdout).toContain('written by the service holding the data dir')
    const before = acknowledged.filter((entry) => entry.at < began).map((entry) => entry.name)
    expect(before.length).toBeGreaterThan(0)
    expect(acknowledged.length).toBeGreaterThan(before.length)

    // A backup never replaces a file, and a restore never goes into a data dir in use.
    const again = await runCommand(['backup', '--data-dir', dataDir, '--to', file])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('a backup never replaces a file')
    const taken = join(root, 'taken')
    mkdirSync(taken)
    writeFileSync(join(taken, 'something'), 'x')
    const refused = await runCommand(['restore', '--from', file, '--data-dir', taken])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('is not empty')
    expect(existsSync(join(taken, 'latchkey.sqlite'))).toBe(false)

    const restoredDir = join(root, 'restored')
    const restore = await runCommand(['restore', '--from', file, '--data-dir', restoredDir])
    expect(restore.stderr).toBe('')
    expect(restore.code).toBe(0)
    const restored = await startService({
      name: 'restored',
      args: ['--data-dir', restoredDir, '--master-key-file', join(dataDir, 'master.key')],
    })
    services.push(restored)
    expect(restored.info.organizationId).toBe(service.info.organizationId)
    const listed = await client.query(restored, 'list_wallets')
    expect(listed.status).toBe(200)
    const names = new Set(
      (listed.body.wallets as { walletName: string }[]).map((wallet) => wallet.walletName),
    )
    for (const name of ['first', ...before])
      expect({ name, restored: names.has(name) }).toEqual({ name, restored: true })
    // Consistent: a prefix of the burst (every wallet in it has its account; nothing after a gap).
    const burstNames = acknowledged.map((entry) => entry.name)
    const present = burstNames.filter((name) => names.has(name))
    expect(present).toEqual(burstNames.slice(0, present.length))
    const accounts = await client.query(restored, 'list_wallet_accounts', { walletId: first.walletId })
    expect(accounts.status).toBe(200)
    const signed = resultOf(
      'sign_raw_payload',
      await client.submit(restored, 'sign_raw_payload', {
        signWith: first.addresses[0],
        payload: '22'.repeat(32),
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      }),
    )
    expect(signed.r).toMatch(/^[0-9a-f]{64}$/)
  })
  // The attack: a local user plants a dangling symlink where the operator will write a backup
  // (or where the service is asked to write one), pointing at a file it wants created or
  // overwritten. The copy must go nowhere but a new file at the path given.
  it('a backup never writes through a dangling symlink planted at its target, whoever makes the copy', {
    timeout: 240_000,
  }, async () => {
    const root = tempDir('backup-symlink')
    dirs.push(root)
    const dataDir = join(root, 'data')
    const planted = join(root, 'planted')
    mkdirSync(planted)
    const victim = join(root, 'victim.sqlite')
    const link = join(planted, 'latchkey.backup')
    symlinkSync(victim, link)
    const outcomes: string[] = []
    // No service holds the data dir: the command makes the copy itself.
    const service = await startService({ name: 'symlink', args: ['--data-dir', dataDir] })
    expect(await service.stop()).toBe(0)
    const alone = await runCommand(['backup', '--data-dir', dataDir, '--to', link])
    outcomes.push(`alone: ${alone.code}`)
    expect(alone.stderr).toContain('exists')
    // The service holds it: the command, and a request sent straight to the service (as if the
    // link were planted after the command looked), are both refused.
    const running = await startService({ name: 'symlink', args: ['--data-dir', dataDir] })
    services.push(running)
    const held = await runCommand(['backup', '--data-dir', dataDir, '--to', link])
    outcomes.push(`held: ${held.code}`)
    expect(held.stderr).toContain('exists')
    const asked = await askDataDirHolder(dataDir, `backup ${JSON.stringify(link)}`)
    expect(asked).toMatch(/^error .*exists/)
    expect(outcomes).toEqual(['alone: 1', 'held: 1'])
    expect(existsSync(victim)).toBe(false)
    expect(lstatSync(link).isSymbolicLink()).toBe(true)
    // Nothing left behind beside the target, and a good path still gets its backup.
    expect(readdirSync(planted)).toEqual(['latchkey.backup'])
    const good = await runCommand(['backup', '--data-dir', dataDir, '--to', join(planted, 'good.backup')])
    expect(good.stderr).toBe('')
    expect(good.code).toBe(0)
    expect(readdirSync(planted).sort()).toEqual(['good.backup', 'latchkey.backup'])
  })
})
