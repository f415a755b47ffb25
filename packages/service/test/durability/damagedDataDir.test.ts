// A data dir whose database file has a damaged page: the service refuses to start on it, naming the
// file and writing nothing; `--skip-integrity-check` (the operator's way to copy out what is still
// readable, or to start on a large file checked otherwise) opens it.
import { closeSync, openSync, statSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, expect, it } from 'vitest'
import { DATABASE_FILE, openDataDir } from '../../src/kernel/store/durableStores.ts'
import { killAll, runToExit, startService } from '../support/serviceProcess.ts'
import { hashTree, removeDir, tempDir } from './tempDir.ts'

afterEach(killAll)
const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) removeDir(dir)
})

it('refuses a damaged database file, naming it, and opens it with --skip-integrity-check', async () => {
  const parent = tempDir('damaged')
  dirs.push(parent)
  const dir = join(parent, 'data')
  // A service's data dir, then filler rows so that a page in the middle belongs to no table the
  // start reads.
  const first = await startService({ args: ['--data-dir', dir] })
  await first.stop()
  const store = await openDataDir(dir)
  await store.transaction(async (tx) => {
    for (let i = 0; i < 400; i++)
      await tx.put('pluginRows', {
        id: `filler-${String(i).padStart(4, '0')}`,
        kind: 'filler',
        data: { text: 'x'.repeat(1000) },
        createdAt: 1,
        updatedAt: 1,
      })
  })
  await store.close()
  const path = join(dir, DATABASE_FILE)
  const pageSize = 4096
  const page = Math.floor(statSync(path).size / pageSize) - 20
  const fd = openSync(path, 'r+')
  writeSync(fd, Buffer.alloc(512, 0xa5), 0, 512, page * pageSize)
  closeSync(fd)

  const { LOCK: _lock, ...before } = hashTree(dir)
  const refused = await runToExit({ args: ['--data-dir', dir] })
  expect(refused.code, refused.stderr).toBe(1)
  expect(refused.stdout).toBe('')
  expect(refused.stderr).toContain(`${path} is damaged`)
  expect(refused.stderr).toMatch(/restore the data dir from a backup/)
  const { LOCK: _lockAfter, ...after } = hashTree(dir)
  expect(after).toEqual(before)

  const unchecked = await startService({ args: ['--data-dir', dir, '--skip-integrity-check'] })
  const health = await fetch(`${unchecked.baseUrl}/livez`)
  expect(health.status).toBe(200)
  expect(await unchecked.stop()).toBe(0)
}, 90_000)
