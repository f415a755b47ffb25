import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { lockDataDir } from './lockDataDir.ts'

const root = mkdtempSync(join(tmpdir(), 'latchkey-lock-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

it('one holder per data dir, whatever the path to it; released, it can be taken again; nothing is created in it', async () => {
  const dir = join(root, 'a', 'data')
  const lock = await lockDataDir(dir)
  expect(readdirSync(dir)).toEqual([])
  await expect(lockDataDir(dir)).rejects.toThrow(`${dir} is in use by process ${process.pid}`)
  mkdirSync(join(root, 'links'))
  symlinkSync(dir, join(root, 'links', 'data'))
  await expect(lockDataDir(join(root, 'links', 'data'))).rejects.toThrow(
    `is in use by process ${process.pid}`,
  )
  // Another data dir is another lock.
  const other = await lockDataDir(join(root, 'b'))
  await lock.release()
  await lock.release()
  const again = await lockDataDir(dir)
  await again.release()
  await other.release()
})

it('of many takers at once, exactly one gets the data dir', async () => {
  const dir = join(root, 'race')
  const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => lockDataDir(dir)))
  const held = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []))
  expect(held).toHaveLength(1)
  for (const o of outcomes)
    if (o.status === 'rejected') expect(String(o.reason)).toContain('is in use by process')
  await held[0]!.release()
})
