// One process per data dir: a second service on a data dir in use is refused with the holder's pid,
// and a lock left by a process killed with kill -9 is taken over on the next start.
import { afterAll, afterEach, expect, it } from 'vitest'
import { killAll, runToExit, startService } from '../support/serviceProcess.ts'
import { removeDir, tempDir } from './tempDir.ts'

afterEach(killAll)
const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) removeDir(dir)
})

it('a second process on a data dir in use exits 1 naming the holder; after kill -9 the next start takes over', async () => {
  const dir = tempDir('lock')
  dirs.push(dir)
  const first = await startService({ args: ['--data-dir', dir] })
  const second = await runToExit({ args: ['--data-dir', dir] })
  expect(second.code, second.stderr).toBe(1)
  expect(second.stdout).toBe('')
  expect(second.stderr).toContain(`is in use by process ${first.pid}`)
  // The first keeps serving.
  expect((await fetch(`${first.info.baseUrl}/health`)).status).toBe(200)
  await first.crash()
  const third = await startService({ args: ['--data-dir', dir] })
  // Same data: the dev organization of the first start.
  expect(third.info.organizationId).toBe(first.info.organizationId)
  expect(await third.stop()).toBe(0)
}, 60_000)
