import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../scripts/postgres.mjs'
import type { ServiceEventMap, ServiceEventName } from './base/events.ts'
import { newId } from './base/ids.ts'
import { createSealer } from './crypto/sealer.ts'
import { JobError, JobQueue, type JobQueueHost, type JobQueueOptions, PermanentJobError } from './JobQueue.ts'
import { openPostgres } from './store/durableStores.ts'
import { openMemoryStore } from './store/memory.ts'
import type { Store } from './store/Store.ts'

/**
 * The durable queue against the databases it runs on: SQLite (one process) and PostgreSQL (a
 * throwaway cluster, several stores standing for several instances on one database).
 */
let cluster: PostgresCluster | undefined
let database = 0
const opened: Store[] = []
const queues: JobQueue[] = []

afterEach(async () => {
  await Promise.all(queues.splice(0).map((queue) => queue.stop()))
})

afterAll(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()))
  await cluster?.dispose()
})

type Event = { [K in ServiceEventName]: [K, ServiceEventMap[K]] }[ServiceEventName]

/** A host over `store` with a clock the test moves and the events it saw. */
function hostOn(store: Store, key = new Uint8Array(32).fill(7)) {
  const sealer = createSealer(key)
  const clock = { at: 1_700_000_000_000 }
  const events: Event[] = []
  const host: JobQueueHost = {
    store,
    now: () => clock.at,
    newId: () => newId(clock.at),
    seal: (text) => sealer.seal(new TextEncoder().encode(text)),
    openText: (sealed) => new TextDecoder().decode(sealer.open(sealed)),
    emit: (name, data) => {
      events.push([name, data] as Event)
    },
  }
  return { host, clock, events }
}

function queueOn(host: JobQueueHost, options: JobQueueOptions = {}): JobQueue {
  const queue = new JobQueue(host, { backoff: { baseMs: 1000, maxMs: 8000 }, ...options })
  queues.push(queue)
  return queue
}

/** A promise and what resolves it. */
function opening(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void
  const promise = new Promise<void>((done) => {
    resolve = done
  })
  return { promise, resolve }
}

/** `store`, counting the job rows each of its reads returns (`read.rows`). */
function countingReads(store: Store) {
  const read = { rows: 0 }
  const counted = new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown
      if (typeof value !== 'function') return value
      if (prop !== 'findBy' && prop !== 'pageBy') return (value as (...a: unknown[]) => unknown).bind(target)
      return async (...args: unknown[]) => {
        const rows = (await (value as (...a: unknown[]) => Promise<unknown[]>).apply(target, args)) ?? []
        if (args[0] === 'jobs') read.rows += rows.length
        return rows
      }
    },
  })
  return { store: counted, read }
}

const backends: [string, () => Promise<Store>][] = [
  ['SQLite', async () => openMemoryStore()],
  [
    'PostgreSQL',
    async () => {
      cluster ??= await startPostgres()
      const name = `jobs_${++database}`
      cluster.psql(`create database ${name}`)
      const store = await openPostgres(cluster.url.replace(/\/[^/]*$/, `/${name}`), { max: 8 })
      opened.push(store)
      return store
    },
  ],
]

/** The PostgreSQL database of the store the tests of a backend share (`open` makes others). */
let shared = 0

/** A second store on the database of `store` (another instance), for PostgreSQL; SQLite has one. */
async function secondStore(name: string, store: Store): Promise<Store> {
  if (name === 'SQLite') return store
  const other = await openPostgres(cluster!.url.replace(/\/[^/]*$/, `/jobs_${shared}`), { max: 8 })
  opened.push(other)
  return other
}

describe.each(backends)('job queue on %s', (name, open) => {
  let store: Store
  beforeAll(async () => {
    store = await open()
    shared = database
  }, 600_000)

  it('runs a job once after its transaction commits, never one whose transaction rolled back', async () => {
    const { host, events } = hostOn(store)
    const queue = queueOn(host)
    const runs: unknown[] = []
    queue.handle<{ n: number }>('count', {
      run: async (payload, context) => {
        runs.push({ payload, attempt: context.attempt, uncertain: context.uncertain })
      },
    })
    await expect(
      store.transaction(async (tx) => {
        await queue.enqueue(tx, 'count', { n: 1 })
        throw new Error('the change failed')
      }),
    ).rejects.toThrow('the change failed')
    const id = await store.transaction((tx) => queue.enqueue(tx, 'count', { n: 2 }))
    expect(await queue.runDue()).toBe(1)
    await queue.idle()
    expect(await queue.runDue()).toBe(0)
    expect(runs).toEqual([{ payload: { n: 2 }, attempt: 1, uncertain: false }])
    expect(await store.get('jobs', id)).toBeUndefined()
    expect(events).toEqual([['job.done', { kind: 'count', attempts: 1 }]])
  })

  it('runs its feeders at each tick before claiming: what they enqueue runs in that tick; one that fails is a retry of its kind and stops nothing', async () => {
    const { host, events } = hostOn(store)
    const queue = queueOn(host)
    const runs: number[] = []
    queue.handle<{ n: number }>('fed', {
      run: async (payload) => {
        runs.push(payload.n)
      },
    })
    const toFeed = [1, 2]
    queue.feed('broken', async () => {
      throw new JobError('feed_down')
    })
    queue.feed('feeder', async () => {
      const n = toFeed.shift()
      if (n !== undefined) await store.transaction((tx) => queue.enqueue(tx, 'fed', { n }))
    })
    // Nothing was enqueued before: the first tick claims what its feeder enqueued.
    expect(await queue.runDue()).toBeGreaterThanOrEqual(1)
    for (let tick = 0; tick < 3; tick++) {
      await queue.idle()
      await queue.runDue()
    }
    await queue.idle()
    expect(runs.sort()).toEqual([1, 2])
    // Once a tick: the first and the three after it.
    const retries = events.filter(([name]) => name === 'job.retry')
    expect(retries).toHaveLength(4)
    expect(new Set(retries.map((event) => JSON.stringify(event)))).toEqual(
      new Set([JSON.stringify(['job.retry', { kind: 'broken', attempts: 1, reason: 'feed_down' }])]),
    )
  })

  it('keeps a sealed payload unreadable at rest and opens it for the handler', async () => {
    const { host } = hostOn(store)
    const queue = queueOn(host)
    const seen: unknown[] = []
    let release!: () => void
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    queue.handle<{ code: string }>('secret', {
      run: async (payload) => {
        seen.push(payload)
        await held
      },
    })
    const id = await store.transaction((tx) =>
      queue.enqueue(tx, 'secret', { code: '271828' }, { sealed: true }),
    )
    const stored = await store.get('jobs', id)
    expect(JSON.stringify(stored)).not.toContain('271828')
    expect(stored).toMatchObject({ kind: 'secret', state: 'pending', attempts: 0 })
    await queue.runDue()
    expect(await store.get('jobs', id)).toMatchObject({
      state: 'running',
      attempts: 1,
      claimedBy: expect.stringMatching(new RegExp(`^${queue.workerId}/.`)),
    })
    release()
    await queue.idle()
    expect(seen).toEqual([{ code: '271828' }])
  })

  it('runs at most maxRunning of a kind at once (never every slot), so other kinds still run', async () => {
    const { host } = hostOn(store)
    const queue = queueOn(host, { concurrency: 4 })
    let release: () => void = () => undefined
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    let running = 0
    let most = 0
    // Asks for more than the queue has: it still leaves one slot to the others.
    queue.handle(`slow-${name}`, {
      maxRunning: 10,
      run: async () => {
        most = Math.max(most, ++running)
        await held
        running--
      },
    })
    const quick: number[] = []
    queue.handle<{ n: number }>(`quick-${name}`, {
      run: async ({ n }) => {
        quick.push(n)
      },
    })
    await store.transaction(async (tx) => {
      for (let i = 0; i < 6; i++) await queue.enqueue(tx, `slow-${name}`, {})
    })
    await queue.runDue()
    await store.transaction(async (tx) => {
      for (let n = 0; n < 3; n++) await queue.enqueue(tx, `quick-${name}`, { n })
    })
    for (let tick = 0; tick < 50 && quick.length < 3; tick++) {
      await queue.runDue()
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    expect({ most, slowRunning: running, quick: quick.sort() }).toEqual({
      most: 3,
      slowRunning: 3,
      quick: [0, 1, 2],
    })
    release()
    await queue.idle()
  })

  it('a queue stepped with runDue, never started, claims nothing by itself once a run ends', async () => {
    const { host, clock } = hostOn(store)
    const queue = queueOn(host)
    queue.handle('stepped', {
      run: async () => {
        throw new JobError('try_later')
      },
    })
    const id = await store.transaction((tx) => queue.enqueue(tx, 'stepped', {}))
    expect(await queue.runDue()).toBe(1)
    await queue.idle()
    const row = (await store.get('jobs', id))!
    expect(row).toMatchObject({ state: 'pending', attempts: 1 })
    // Due now; only the caller's next runDue may take it.
    clock.at = row.runAfter
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(await store.get('jobs', id)).toMatchObject({ state: 'pending', attempts: 1 })
    expect(await queue.runDue()).toBe(1)
    await queue.idle()
    expect(await store.get('jobs', id)).toMatchObject({ state: 'pending', attempts: 2 })
  })

  it('retries with a growing, bounded backoff, then fails for good with its reason', async () => {
    const { host, clock, events } = hostOn(store)
    const queue = queueOn(host, { maxAttempts: 4 })
    let runs = 0
    queue.handle('flaky', {
      run: async () => {
        runs++
        throw new JobError('smtp_4xx')
      },
    })
    const id = await store.transaction((tx) => queue.enqueue(tx, 'flaky', {}))
    const waits: number[] = []
    for (let attempt = 1; attempt <= 4; attempt++) {
      expect(await queue.runDue()).toBe(1)
      await queue.idle()
      const row = (await store.get('jobs', id))!
      if (attempt < 4) {
        expect(row).toMatchObject({ state: 'pending', attempts: attempt, lastError: 'smtp_4xx' })
        waits.push(row.runAfter - clock.at)
        // Not due before its backoff.
        clock.at = row.runAfter - 1
        expect(await queue.runDue()).toBe(0)
        clock.at = row.runAfter
      } else expect(row).toMatchObject({ state: 'failed', attempts: 4, lastError: 'smtp_4xx' })
    }
    // 1 s, 2 s, 4 s less up to a fifth of jitter.
    expect(waits.map((wait, i) => wait <= 1000 * 2 ** i && wait >= 800 * 2 ** i)).toEqual([true, true, true])
    clock.at += 60_000
    expect(await queue.runDue()).toBe(0)
    expect(runs).toBe(4)
    expect(events.map(([event]) => event)).toEqual(['job.retry', 'job.retry', 'job.retry', 'job.failed'])
    expect(events.at(-1)).toEqual(['job.failed', { kind: 'flaky', attempts: 4, reason: 'smtp_4xx' }])
  })

  it('fails at once on a permanent failure, and records only the class of an unexpected error', async () => {
    const { host, events } = hostOn(store)
    const queue = queueOn(host)
    queue.handle<{ permanent: boolean }>('refused', {
      run: async ({ permanent }) => {
        if (permanent) throw new PermanentJobError('smtp_5xx')
        throw new TypeError('secret 314159 in a message')
      },
    })
    const permanent = await store.transaction((tx) => queue.enqueue(tx, 'refused', { permanent: true }))
    const unexpected = await store.transaction((tx) => queue.enqueue(tx, 'refused', { permanent: false }))
    await queue.runDue()
    await queue.idle()
    expect(await store.get('jobs', permanent)).toMatchObject({ state: 'failed', lastError: 'smtp_5xx' })
    const retried = await store.get('jobs', unexpected)
    expect(retried).toMatchObject({ state: 'pending', lastError: 'error:TypeError' })
    expect(JSON.stringify(events)).not.toContain('314159')
  })

  it('times a run out, aborts it and tells the next run its outcome is unknown', async () => {
    const { host, clock } = hostOn(store)
    const queue = queueOn(host, { timeoutMs: 50 })
    const contexts: { attempt: number; uncertain: boolean }[] = []
    let aborted = false
    queue.handle('slow', {
      run: async (_, context) => {
        contexts.push({ attempt: context.attempt, uncertain: context.uncertain })
        if (context.attempt === 1)
          await new Promise<void>((resolve) => {
            context.signal.addEventListener('abort', () => {
              aborted = true
              resolve()
            })
          })
      },
    })
    const id = await store.transaction((tx) => queue.enqueue(tx, 'slow', {}))
    await queue.runDue()
    await queue.idle()
    expect(aborted).toBe(true)
    const row = (await store.get('jobs', id))!
    expect(row).toMatchObject({ state: 'pending', uncertain: true, lastError: 'timeout' })
    clock.at = row.runAfter
    await queue.runDue()
    await queue.idle()
    expect(contexts).toEqual([
      { attempt: 1, uncertain: false },
      { attempt: 2, uncertain: true },
    ])
    expect(await store.get('jobs', id)).toBeUndefined()
  })

  // A handler may put its own job again while it runs (the webhooks' turn passed on to the end of
  // the queue, a delivery retried later): the job is written afresh (attempts 0), and the same
  // worker may claim it again (attempts 1 again) before the first run ends. Each run's end is its
  // own claim's: the first run ending first once deleted the job the second run held, losing the
  // second run's retry for good.
  for (const firstEndsFirst of [true, false])
    it(`a job its run put again and the same worker claimed again is the second run's to finish (the first run ends ${firstEndsFirst ? 'first' : 'last'})`, async () => {
      const ended = { next: () => {} }
      const { host, clock, events } = hostOn(
        new Proxy(store, {
          get(target, prop, receiver) {
            const value = Reflect.get(target, prop, receiver) as unknown
            if (typeof value !== 'function') return value
            if (prop !== 'transaction') return (value as (...a: unknown[]) => unknown).bind(target)
            return async (...args: unknown[]) => {
              const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args)
              ended.next()
              return result
            }
          },
        }),
      )
      /** Resolves when the next transaction of the queue's store has committed. */
      const nextTransaction = () => new Promise<void>((resolve) => (ended.next = resolve))
      const queue = queueOn(host)
      const kind = `passes-on-${firstEndsFirst}`
      const id = `job.turn.${name}.${firstEndsFirst}`
      const gates = [opening(), opening()]
      const putAgain = opening()
      const runs: { attempt: number; uncertain: boolean }[] = []
      queue.handle(kind, {
        run: async (_, context) => {
          runs.push({ attempt: context.attempt, uncertain: context.uncertain })
          if (runs.length === 1) {
            // Its work is not over: the job goes back to the end of the queue.
            await store.transaction((tx) => queue.enqueue(tx, kind, {}, { id }))
            putAgain.resolve()
            await gates[0]!.promise
          } else if (runs.length === 2) {
            // It finds the first run still at work: it must be tried again.
            await gates[1]!.promise
            throw new JobError('busy')
          }
        },
      })
      await store.transaction((tx) => queue.enqueue(tx, kind, {}, { id }))
      expect(await queue.runDue()).toBe(1)
      await putAgain.promise
      expect(await queue.runDue()).toBe(1)
      expect(await store.get('jobs', id)).toMatchObject({ state: 'running', attempts: 1 })
      for (const gate of firstEndsFirst ? [0, 1] : [1, 0]) {
        const committed = nextTransaction()
        gates[gate]!.resolve()
        await committed
      }
      await queue.idle()
      // The second run's retry stands, whichever ended first.
      const row = (await store.get('jobs', id))!
      expect(row).toMatchObject({ state: 'pending', attempts: 1, lastError: 'busy' })
      expect(row.claimedBy).toBeUndefined()
      clock.at = row.runAfter
      expect(await queue.runDue()).toBe(1)
      await queue.idle()
      expect(await store.get('jobs', id)).toBeUndefined()
      expect(runs).toEqual([
        { attempt: 1, uncertain: false },
        { attempt: 1, uncertain: false },
        { attempt: 2, uncertain: false },
      ])
      // The first run's end is not recorded: its job was put again.
      expect(events).toEqual([
        ['job.retry', { kind, attempts: 1, reason: 'busy' }],
        ['job.done', { kind, attempts: 2 }],
      ])
    })

  it('lets another worker take a job whose lease ran out; the first worker then changes nothing', async () => {
    const first = hostOn(store)
    const second = hostOn(await secondStore(name, store))
    const dead = queueOn(first.host, { leaseMs: 10_000, timeoutMs: 10_000 })
    const alive = queueOn(second.host, { leaseMs: 10_000 })
    let finishDead!: () => void
    dead.handle('once', {
      run: () =>
        new Promise<void>((resolve) => {
          finishDead = resolve
        }),
    })
    const contexts: { attempt: number; uncertain: boolean }[] = []
    alive.handle('once', {
      run: async (_, context) => {
        contexts.push({ attempt: context.attempt, uncertain: context.uncertain })
      },
    })
    const id = await store.transaction((tx) => dead.enqueue(tx, 'once', {}))
    expect(await dead.runDue()).toBe(1)
    // Held: nobody else may take it while the lease stands.
    expect(await alive.runDue()).toBe(0)
    second.clock.at += 10_000
    expect(await alive.runDue()).toBe(1)
    await alive.idle()
    expect(contexts).toEqual([{ attempt: 2, uncertain: true }])
    expect(second.events).toContainEqual(['job.reclaimed', { kind: 'once' }])
    expect(await store.get('jobs', id)).toBeUndefined()
    // The first run ends late: the job is not brought back, nothing is recorded for it.
    finishDead()
    await dead.idle()
    expect(await store.get('jobs', id)).toBeUndefined()
    expect(first.events).toEqual([])
  })

  // A front of jobs the worker cannot start (a capped kind at its cap: webhook senders at slow
  // receivers, which a few sign-ups make) hides no other kind's job due behind it, however deep
  // and whatever millisecond that job shares with it, and costs a tick a bounded read. The read of
  // due jobs once stopped at 16 found of any kind (a code waited behind every sender's turn), then
  // paged past the front skipping the jobs tied with a page's last one, and read every pending job
  // once the front passed 8 pages.
  it.each([
    ['70 deep, the job due the same millisecond as its last one', 70, 0],
    ['600 deep, with 300 more not due yet', 600, 300],
  ])(
    'a front of jobs it cannot start hides none due behind it: %s; a tick reads two pages',
    async (_, deep, later) => {
      const fresh = await open()
      if (name === 'SQLite') opened.push(fresh)
      const { store: counted, read } = countingReads(fresh)
      const { host, clock } = hostOn(counted)
      const queue = queueOn(host, { concurrency: 8 })
      let release: () => void = () => undefined
      const held = new Promise<void>((resolve) => {
        release = resolve
      })
      queue.handle('slow', { maxRunning: 4, run: async () => void (await held) })
      const quick: number[] = []
      queue.handle<{ n: number }>('quick', { run: async ({ n }) => void quick.push(n) })
      await fresh.transaction(async (tx) => {
        for (let i = 0; i < deep; i++) await queue.enqueue(tx, 'slow', {})
      })
      await fresh.transaction(async (tx) => {
        await queue.enqueue(tx, 'quick', { n: 1 })
        for (let i = 0; i < later; i++)
          await queue.enqueue(tx, 'quick', { n: 2 }, { runAfter: clock.at + 3_600_000 + i })
      })
      const perTick: number[] = []
      for (let tick = 0; tick < 5 && quick.length === 0; tick++) {
        read.rows = 0
        await queue.runDue()
        perTick.push(read.rows)
        await new Promise((resolve) => setTimeout(resolve, 5))
        clock.at += 10
      }
      release()
      await queue.idle()
      expect(quick).toEqual([1])
      // The front's page, a page of each kind that can start, and the jobs running.
      for (const rows of perTick) expect(rows).toBeLessThanOrEqual(2 * 64 + 8)
    },
  )

  it('runs each of 50 jobs exactly once with two workers racing for them', async () => {
    const other = await secondStore(name, store)
    const runs = new Map<number, string[]>()
    // Each worker's first runs wait (at most 10 s) until the other has started one too: one worker
    // holds at most 4 jobs, so the other must claim some. Without it, under load, one worker could
    // finish all 50 before the other's first poll (a fresh pool's first connection to PostgreSQL
    // took that long in CI), and "both took part" would say nothing about the race.
    const startedBy = new Set<number>()
    let bothStarted = () => {}
    const both = new Promise<void>((resolve) => {
      bothStarted = resolve
    })
    const workers = [hostOn(store), hostOn(other)].map(({ host }, index) => {
      const queue = queueOn(host, { pollMs: 5, concurrency: 4 })
      queue.handle<{ n: number }>('race', {
        run: async ({ n }) => {
          runs.set(n, [...(runs.get(n) ?? []), `worker ${index}`])
          startedBy.add(index)
          if (startedBy.size === 2) bothStarted()
          await Promise.race([both, new Promise((resolve) => setTimeout(resolve, 10_000))])
          await new Promise((resolve) => setTimeout(resolve, 2))
        },
      })
      return queue
    })
    await Promise.all(
      Array.from({ length: 50 }, (_, n) =>
        store.transaction((tx) => workers[n % 2]!.enqueue(tx, 'race', { n })),
      ),
    )
    for (const worker of workers) worker.start()
    const deadline = Date.now() + 20_000
    while ((await store.count('jobs', 'kind', 'race')) > 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20))
    await Promise.all(workers.map((worker) => worker.stop()))
    expect(await store.count('jobs', 'kind', 'race')).toBe(0)
    expect([...runs.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, n) => n))
    expect([...runs.values()].filter((by) => by.length !== 1)).toEqual([])
    // Both took part (on PostgreSQL two stores, on SQLite two workers of one process).
    expect(new Set([...runs.values()].flat()).size).toBe(2)
  }, 30_000)
})
