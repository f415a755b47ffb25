// A data dir started with another master key is refused before anything is written: the message
// says the key does not open the data, names where the key was read from, and no file changes.
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, expect, it } from 'vitest'
import { killAll, runToExit, startService } from '../support/serviceProcess.ts'
import { hashTree, removeDir, tempDir } from './tempDir.ts'

afterEach(killAll)
const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) removeDir(dir)
})

it('another master.key in the data dir: exit 1 naming the key file, nothing written', async () => {
  const parent = tempDir('wrong-master-key')
  dirs.push(parent)
  const dir = join(parent, 'data')
  const first = await startService({ args: ['--data-dir', dir] })
  await first.stop()
  writeFileSync(join(dir, 'master.key'), randomBytes(32).toString('hex'), { mode: 0o600 })
  // The lock's pid note is rewritten by every start; everything else must stay as it was.
  const { LOCK: _lock, ...before } = hashTree(dir)
  const run = await runToExit({ args: ['--data-dir', dir] })
  expect(run.signal).toBeNull()
  expect(run.code, run.stderr).toBe(1)
  expect(run.stdout).toBe('')
  expect(run.stderr).toMatch(/master key does not open/)
  expect(run.stderr).toMatch(/nothing was changed/)
  expect(run.stderr).toContain(join(dir, 'master.key'))
  expect(run.stderr).not.toMatch(/sealed value failed authentication/)
  const { LOCK: _lockAfter, ...after } = hashTree(dir)
  expect(after).toEqual(before)
}, 90_000)
