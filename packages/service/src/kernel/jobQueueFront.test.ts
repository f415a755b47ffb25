// A front of jobs a worker cannot start (a capped kind at its cap: webhook senders at slow
// receivers, which a few sign-ups make) hides no other kind's job due behind it, however deep the
// front and whatever millisecond that job shares with it, and costs a tick a bounded read. The
// read of due jobs once stopped at 16 found of any kind (a code waited behind every sender's
// turn), then paged past the front skipping the jobs tied with a page's last one, and read every
// pending job once the front passed 8 pages.
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { newId } from './base/ids.ts'
import { createSealer } from './crypto/sealer.ts'
import { JobQueue, type JobQueueHost } from './JobQueue.ts'
import { openMemoryStore } from './store/memory.ts'
import type { Store } from './store/Store.ts'

const opened: Store[] = []
const queues: JobQueue[] = []
afterEach(async () => {
  await Promise.all(queues.splice(0).map((queue) => queue.stop()))
})
afterAll(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()))
})

/**
 * A queue on a fresh store with a fixed clock, `slow` jobs held running until `release` (at most
 * `maxRunning` at once) and `quick` jobs that record their `n`; `read` counts the job rows each
 * read of the store returned.
 */
async function queueWithAFront(maxRunning: number) {
  const store = await openMemoryStore()
  opened.push(store)
  const sealer = createSealer(new Uint8Array(32).fill(7))
  const clock = { at: 1_700_000_000_000 }
  const read = { rows: 0 }
  const counted = new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown
      if (typeof value !== 'function') return value
      if (prop === 'findBy' || prop === 'pageBy')
        return async (...args: unknown[]) => {
          const rows = (await (value as (...a: unknown[]) => Promise<unknown[]>).apply(target, args)) ?? []
          if (args[0] === 'jobs') read.rows += rows.length
          return rows
        }
      return (value as (...a: unknown[]) => unknown).bind(target)
    },
  })
  const host: JobQueueHost = {
    store: counted,
    now: () => clock.at,
    newId: () => newId(clock.at),
    seal: (text) => sealer.seal(new TextEncoder().encode(text)),
    openText: (sealed) => new TextDecoder().decode(sealer.open(sealed)),
    emit: () => undefined,
  }
  const queue = new JobQueue(host, { concurrency: maxRunning * 2 })
  queues.push(queue)
  let release: () => void = () => undefined
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  queue.handle('slow', { maxRunning, run: async () => void (await held) })
  const quick: number[] = []
  queue.handle<{ n: number }>('quick', { run: async ({ n }) => void quick.push(n) })
  /** Ticks until the quick jobs ran (at most 20), the clock moving on. */
  const tickUntilQuick = async () => {
    for (let tick = 0; tick < 20 && quick.length === 0; tick++) {
      await queue.runDue()
      await new Promise((resolve) => setTimeout(resolve, 5))
      clock.at += 10
    }
  }
  return { store, queue, clock, read, quick, release, tickUntilQuick }
}

describe('a front of jobs the worker cannot start', () => {
  it('hides no job due the same millisecond as its last one', async () => {
    const { store, queue, quick, release, tickUntilQuick } = await queueWithAFront(2)
    await store.transaction(async (tx) => {
      for (let i = 0; i < 70; i++) await queue.enqueue(tx, 'slow', {})
    })
    await store.transaction(async (tx) => {
      await queue.enqueue(tx, 'quick', { n: 1 })
    })
    await tickUntilQuick()
    release()
    await queue.idle()
    expect(quick).toEqual([1])
  })

  it('600 jobs deep, hides no job due behind it, and a tick reads two pages, not every pending job', async () => {
    const { store, queue, clock, read, quick, release, tickUntilQuick } = await queueWithAFront(4)
    // 600 due senders (about 60 sign-ups' endpoints), a job due behind them, and 3,000 not due yet.
    await store.transaction(async (tx) => {
      for (let i = 0; i < 600; i++) {
        clock.at += 1
        await queue.enqueue(tx, 'slow', {})
      }
      await queue.enqueue(tx, 'quick', { n: 1 })
      for (let i = 0; i < 3000; i++)
        await queue.enqueue(tx, 'quick', { n: 2 }, { runAfter: clock.at + 3_600_000 + i })
    })
    clock.at += 1
    await queue.runDue()
    const perTick: number[] = []
    for (let tick = 0; tick < 3; tick++) {
      read.rows = 0
      await queue.runDue()
      perTick.push(read.rows)
    }
    await tickUntilQuick()
    release()
    expect(quick).toEqual([1])
    // The front's page, a page of the kind that can start, and the jobs running.
    for (const rows of perTick) expect(rows).toBeLessThanOrEqual(2 * 64 + 8)
  })
})
