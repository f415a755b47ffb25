// `export-users --to FILE` writes a new file, mode 0600, opened exclusively: a file already there
// (which kept its own mode, 0644 here: every local user read the exported e-mails and phone
// numbers) and a symlink planted at FILE (which was followed) are refused, as `backup --to` refuses
// them.
import { chmodSync, existsSync, lstatSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadMasterKey, openDataDir } from '../../src/kernel/store/durableStores.ts'
import { createHarness, resultOf, testKey } from '../../src/testing/harness.ts'
import { runCommand } from '../data/runCommand.ts'
import { removeDir, tempDir } from '../durability/tempDir.ts'

const EMAIL = 'alice.export@example.com'
let root: string
let dataDir: string
let organizationId: string

beforeAll(async () => {
  root = tempDir('export-users')
  // The operator's export directory is readable by others (e.g. a shared /srv/exports).
  chmodSync(root, 0o755)
  dataDir = join(root, 'data')
  const harness = await createHarness({
    store: await openDataDir(dataDir),
    masterKey: loadMasterKey(dataDir),
  })
  organizationId = harness.organizationId
  const key = testKey()
  resultOf(
    'create_sub_organization',
    await harness.submit('create_sub_organization', {
      subOrganizationName: 'Alice',
      rootUsers: [
        {
          userName: 'Alice',
          userEmail: EMAIL,
          apiKeys: [key.apiKey('k')],
          authenticators: [],
          oauthProviders: [],
        },
      ],
      rootQuorumThreshold: 1,
    }),
  )
  await harness.service.close()
}, 120_000)
afterAll(() => removeDir(root))

describe('export-users --to', { timeout: 120_000 }, () => {
  it('a new file is made 0600 and holds the verified e-mail', async () => {
    const to = join(root, 'fresh.jsonl')
    const result = await runCommand([
      'export-users',
      '--organization-id',
      organizationId,
      '--data-dir',
      dataDir,
      '--to',
      to,
    ])
    expect(result.code).toBe(0)
    expect(readFileSync(to, 'utf8')).toContain(EMAIL)
    expect((statSync(to).mode & 0o777).toString(8)).toBe('600')
  })

  it('never leaves the exported users in a file others can read (an existing 0644 file at --to)', async () => {
    const to = join(root, 'existing.jsonl')
    writeFileSync(to, '')
    chmodSync(to, 0o644)
    const result = await runCommand([
      'export-users',
      '--organization-id',
      organizationId,
      '--data-dir',
      dataDir,
      '--to',
      to,
    ])
    const leaked = readFileSync(to, 'utf8').includes(EMAIL)
    // Secure: refused (nothing written), or written but owner-only.
    expect({
      code: result.code === 0 ? 0 : 'refused',
      leakedToWorldReadable: leaked && (statSync(to).mode & 0o044) !== 0,
    }).toEqual({ code: result.code === 0 ? 0 : 'refused', leakedToWorldReadable: false })
  })

  it('never writes through a symlink planted at --to', async () => {
    const target = join(root, 'planted-target.jsonl')
    const to = join(root, 'link.jsonl')
    symlinkSync(target, to)
    const result = await runCommand([
      'export-users',
      '--organization-id',
      organizationId,
      '--data-dir',
      dataDir,
      '--to',
      to,
    ])
    expect(lstatSync(to).isSymbolicLink()).toBe(true)
    expect({ exitCode: result.code === 0 ? 0 : 'nonzero', targetCreated: existsSync(target) }).toEqual({
      exitCode: 'nonzero',
      targetCreated: false,
    })
  })
})
