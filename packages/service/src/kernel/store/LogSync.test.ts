import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterEach, describe, expect, it } from 'vitest'
import { openDataDir } from './durableStores.ts'
import { kyselyOf } from './kyselyOf.ts'
import { LogSync } from './LogSync.ts'
import type { PluginRow } from './model.ts'
import type { Store } from './Store.ts'

const row = (id: string): PluginRow => ({ id, kind: 'test', data: {}, createdAt: 1, updatedAt: 1 })

/** A log whose syncs end when the test says: each one started is a deferred promise. */
function controlledLog() {
  const syncs: { resolve: () => void; reject: (error: Error) => void }[] = []
  const log = new LogSync(
    () =>
      new Promise<void>((resolve, reject) => {
        syncs.push({ resolve, reject })
      }),
  )
  return { log, syncs }
}

const tick = () => new Promise((resolve) => setImmediate(resolve))

describe('LogSync', () => {
  it('answers at once when nothing was committed since the last sync', async () => {
    const { log, syncs } = controlledLog()
    await log.settled()
    expect(syncs).toHaveLength(0)
  })

  it('a commit made while a sync runs waits for the next one, which starts when that ends', async () => {
    const { log, syncs } = controlledLog()
    log.committed()
    let first = false
    const a = log.settled().then(() => (first = true))
    await tick()
    expect(syncs).toHaveLength(1)
    // Committed after the first sync began: that sync may not have its pages.
    log.committed()
    let second = false
    const b = log.settled().then(() => (second = true))
    const c = log.settled()
    await tick()
    expect(syncs).toHaveLength(1)
    syncs[0]!.resolve()
    await a
    await tick()
    expect([first, second]).toEqual([true, false])
    // One more sync for both later waiters, not one each.
    expect(syncs).toHaveLength(2)
    syncs[1]!.resolve()
    await Promise.all([b, c])
    expect(second).toBe(true)
    expect(syncs).toHaveLength(2)
  })

  it('once a sync fails, every wait fails, now and later', async () => {
    const { log, syncs } = controlledLog()
    log.committed()
    const a = log.settled()
    await tick()
    syncs[0]!.reject(new Error('EIO'))
    await expect(a).rejects.toThrow('EIO')
    expect(log.failed).toBeInstanceOf(Error)
    log.committed()
    await expect(log.settled()).rejects.toThrow('EIO')
    expect(syncs).toHaveLength(1)
  })
})

describe('a data dir answers a transaction once its log is synced', () => {
  let dir: string
  let store: Store | undefined
  afterEach(async () => {
    await store?.close()
    store = undefined
    rmSync(dir, { recursive: true, force: true })
  })

  it('commits in SQLite at once and answers after the sync; the next group commits once that sync ended, and reads go on meanwhile', async () => {
    dir = mkdtempSync(join(tmpdir(), 'latchkey-logsync-'))
    store = await openDataDir(dir)
    const { log, syncs } = controlledLog()
    store.syncsLog(log)
    let answered = false
    const first = store.transaction((tx) => tx.put('pluginRows', row('a'))).then(() => (answered = true))
    await new Promise((resolve) => setTimeout(resolve, 20))
    // Committed (a read sees it: the thread and the connection serve reads meanwhile), not
    // answered: its sync has not ended.
    expect(await store.get('pluginRows', 'a')).toBeDefined()
    expect(answered).toBe(false)
    expect(syncs).toHaveLength(1)
    // The next transaction waits for that sync before its group runs (groups stay as large as
    // when the commit itself waited for the disk), then commits and waits for a sync of its own.
    let second = false
    const next = store.transaction((tx) => tx.put('pluginRows', row('b'))).then(() => (second = true))
    const third = store.transaction((tx) => tx.put('pluginRows', row('b2')))
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(await store.get('pluginRows', 'b')).toBeUndefined()
    const before = store.batching().commits!.batches
    syncs[0]!.resolve()
    await first
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(await store.get('pluginRows', 'b')).toBeDefined()
    expect(await store.get('pluginRows', 'b2')).toBeDefined()
    // Both in one group, one sync for the two.
    expect(store.batching().commits!.batches - before).toBe(1)
    expect(second).toBe(false)
    expect(syncs).toHaveLength(2)
    syncs[1]!.resolve()
    await Promise.all([next, third])
    // A sync that fails: the transaction is not answered as done, and the store takes no more.
    const failing = store.transaction((tx) => tx.put('pluginRows', row('c')))
    await new Promise((resolve) => setTimeout(resolve, 20))
    syncs[2]!.reject(new Error('EIO'))
    await expect(failing).rejects.toMatchObject({ status: 503 })
    await expect(store.get('pluginRows', 'a')).rejects.toMatchObject({ status: 503 })
  })

  it('syncs the real log file: SQLite runs with synchronous = NORMAL, the log is synced, and no log is nothing to sync', async () => {
    dir = mkdtempSync(join(tmpdir(), 'latchkey-logsync-'))
    store = await openDataDir(dir)
    const { rows } = await sql<{ synchronous: number }>`PRAGMA synchronous`.execute(kyselyOf(store))
    expect(rows[0]!.synchronous).toBe(1)
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => store!.transaction((tx) => tx.put('pluginRows', row(`s${i}`)))),
    )
    expect((await store.all('pluginRows')).length).toBe(20)
    const wal = LogSync.ofDatabase(join(dir, 'latchkey.sqlite'))
    wal.committed()
    await wal.settled()
    expect(wal.failed).toBeUndefined()
    await wal.release()
    const none = LogSync.ofDatabase(join(dir, 'nothing.sqlite'))
    none.committed()
    await none.settled()
  })
})
