// A data dir of 0.1 (the journal format: snapshot.json + journal.ndjson, written by the service at
// commit 5cf7ce5; see fixtures/datadir-0.1.json) is refused at start with a message saying what to
// do, and nothing in it changes.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, expect, it } from 'vitest'
import { killAll, runToExit } from '../support/serviceProcess.ts'
import { hashTree, removeDir, tempDir } from './tempDir.ts'

afterEach(killAll)

const fixture = JSON.parse(readFileSync(new URL('./fixtures/datadir-0.1.json', import.meta.url), 'utf8')) as {
  files: Record<string, string>
}

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) removeDir(dir)
})

/** The 0.1 data dir, with the modes 0.1 gave it (0700 dir, 0600 data files). */
function oldDataDir(): string {
  const parent = tempDir('old-data-dir')
  dirs.push(parent)
  const dir = join(parent, 'data')
  mkdirSync(dir, { mode: 0o700 })
  for (const [name, text] of Object.entries(fixture.files)) {
    writeFileSync(join(dir, name), text)
    chmodSync(join(dir, name), name === '.gitignore' ? 0o644 : 0o600)
  }
  return dir
}

it('a 0.1 data dir (journal.ndjson, snapshot.json): exit 1 with what to do, no file changed', async () => {
  const dir = oldDataDir()
  const before = hashTree(dir)
  const run = await runToExit({ args: ['--data-dir', dir] })
  expect(run.signal).toBeNull()
  expect(run.code, run.stderr).toBe(1)
  // No credentials printed: the service never started.
  expect(run.stdout).toBe('')
  // The message names the data dir and what it found, and says what to do about it.
  expect(run.stderr).toContain(dir)
  expect(run.stderr).toMatch(/journal\.ndjson|snapshot\.json|0\.1/)
  expect(run.stderr).toMatch(/export|migrat|upgrade|another --data-dir|new --data-dir|move|remove|delete/i)
  expect(hashTree(dir)).toEqual(before)
}, 60_000)
