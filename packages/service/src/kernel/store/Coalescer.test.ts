import { describe, expect, it } from 'vitest'
import { Coalescer, lingerRule } from './Coalescer.ts'

/** A unit of work the test finishes by hand. */
interface Sent {
  items: number[]
  finish(): void
  fail(error: unknown): void
}

function harness(
  options: {
    inFlight?: number
    limit?: number
    shared?: (error: unknown) => boolean
    linger?: () => number
    fill?: number
    busy?: () => boolean
    /** How long an item sent alone takes, ms (the round trip `linger` is bounded by). */
    oneTakes?: number
  } = {},
) {
  const sent: Sent[] = []
  const alone: number[] = []
  const coalescer = new Coalescer<number, string>({
    many: (items) =>
      new Promise((resolve, reject) => {
        sent.push({ items, finish: () => resolve(items.map((item) => `many ${item}`)), fail: reject })
      }),
    one: async (item) => {
      alone.push(item)
      if (options.oneTakes) await new Promise((resolve) => setTimeout(resolve, options.oneTakes))
      if (item < 0) throw new Error(`refused ${item}`)
      return `one ${item}`
    },
    shared: options.shared ?? (() => false),
    inFlight: options.inFlight ?? 1,
    limit: options.limit ?? 64,
    ...(options.linger ? { linger: options.linger } : {}),
    ...(options.fill ? { fill: options.fill } : {}),
    ...(options.busy ? { busy: options.busy } : {}),
  })
  return { coalescer, sent, alone }
}

const turn = () => new Promise((resolve) => setImmediate(resolve))

describe('Coalescer', () => {
  it('sends an item that comes alone at once, by itself', async () => {
    const { coalescer, sent, alone } = harness()
    expect(await coalescer.run(7)).toBe('one 7')
    expect(alone).toEqual([7])
    expect(sent).toEqual([])
  })

  it('items that come while a batch is out go together, in order, each with its own answer', async () => {
    const { coalescer, sent } = harness()
    const first = [coalescer.run(1), coalescer.run(2)]
    await turn()
    expect(sent.map((batch) => batch.items)).toEqual([[1, 2]])
    // Never added to the batch already sent: they wait for the next one.
    const later = [coalescer.run(3), coalescer.run(4), coalescer.run(5)]
    await turn()
    expect(sent).toHaveLength(1)
    sent[0]!.finish()
    expect(await Promise.all(first)).toEqual(['many 1', 'many 2'])
    await turn()
    expect(sent.map((batch) => batch.items)).toEqual([
      [1, 2],
      [3, 4, 5],
    ])
    sent[1]!.finish()
    expect(await Promise.all(later)).toEqual(['many 3', 'many 4', 'many 5'])
    expect(coalescer.counts).toEqual({ batches: 2, items: 5 })
  })

  it('keeps at most `inFlight` batches out and at most `limit` items in one', async () => {
    const { coalescer, sent, alone } = harness({ inFlight: 2, limit: 3 })
    const all = Array.from({ length: 10 }, (_, i) => coalescer.run(i))
    await turn()
    expect(sent.map((batch) => batch.items)).toEqual([
      [0, 1, 2],
      [3, 4, 5],
    ])
    sent[1]!.finish()
    await turn()
    expect(sent.map((batch) => batch.items)).toHaveLength(3)
    expect(sent[2]!.items).toEqual([6, 7, 8])
    sent[0]!.finish()
    await turn()
    // The one left goes by itself.
    expect(sent).toHaveLength(3)
    expect(alone).toEqual([9])
    sent[2]!.finish()
    expect(await Promise.all(all)).toEqual([...Array.from({ length: 9 }, (_, i) => `many ${i}`), 'one 9'])
  })

  it('a batch that fails is sent again item by item: one item cannot fail the others', async () => {
    const { coalescer, sent, alone } = harness()
    const runs = [1, -2, 3].map((item) => coalescer.run(item))
    await turn()
    sent[0]!.fail(new Error('the statement failed'))
    const outcomes = await Promise.allSettled(runs)
    expect(alone).toEqual([1, -2, 3])
    expect(outcomes).toEqual([
      { status: 'fulfilled', value: 'one 1' },
      { status: 'rejected', reason: new Error('refused -2') },
      { status: 'fulfilled', value: 'one 3' },
    ])
  })

  it('an error every item would meet (the database is down) fails the whole batch, sent once', async () => {
    const down = new Error('unavailable')
    const { coalescer, sent, alone } = harness({ shared: (error) => error === down })
    const runs = [1, 2, 3].map((item) => coalescer.run(item))
    await turn()
    sent[0]!.fail(down)
    const outcomes = await Promise.allSettled(runs)
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected'])
    expect(alone).toEqual([])
    // The next items go on as usual.
    expect(await coalescer.run(4)).toBe('one 4')
  })

  describe('linger (a busy service)', () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

    it('waits no longer than one recent round trip, never while the database is idle, never when told 0', () => {
      expect(lingerRule({ linger: 40, roundTrip: 3, busy: true })).toBe(3)
      expect(lingerRule({ linger: 40, roundTrip: 100, busy: true })).toBe(40)
      expect(lingerRule({ linger: 40, roundTrip: 3, busy: false })).toBe(0)
      expect(lingerRule({ linger: 0, roundTrip: 3, busy: true })).toBe(0)
      // No statement measured yet: nothing to save by waiting.
      expect(lingerRule({ linger: 40, roundTrip: 0, busy: true })).toBe(0)
    })

    it('items of a steady stream wait for each other, one round trip at most, not the whole linger', async () => {
      const { coalescer, sent, alone } = harness({ linger: () => 10_000, oneTakes: 30 })
      // The first goes at once (no round trip known yet) and takes 30 ms.
      expect(await coalescer.run(1)).toBe('one 1')
      await turn()
      const started = performance.now()
      const runs = [coalescer.run(2), coalescer.run(3)]
      await sleep(5)
      expect(sent).toHaveLength(0)
      while (sent.length === 0 && performance.now() - started < 2000) await sleep(5)
      expect(sent.map((batch) => batch.items)).toEqual([[2, 3]])
      // About one round trip (30 ms), far short of the 10 s linger.
      expect(performance.now() - started).toBeGreaterThanOrEqual(25)
      expect(performance.now() - started).toBeLessThan(2000)
      sent[0]!.finish()
      expect(await Promise.all(runs)).toEqual(['many 2', 'many 3'])
      expect(alone).toEqual([1])
    })

    it('an idle database is not kept waiting: the item goes at once', async () => {
      const { coalescer, alone } = harness({ linger: () => 10_000, oneTakes: 30, busy: () => false })
      await coalescer.run(0)
      await turn()
      const next = coalescer.run(1)
      await turn()
      // Sent in the next turn of the event loop, not a round trip later.
      expect(alone).toEqual([0, 1])
      expect(await next).toBe('one 1')
    })

    it('`fill` items end the wait at once', async () => {
      const { coalescer, sent } = harness({ linger: () => 10_000, fill: 3, oneTakes: 200 })
      await coalescer.run(0)
      await turn()
      const runs = [coalescer.run(1), coalescer.run(2)]
      await sleep(5)
      expect(sent).toHaveLength(0)
      runs.push(coalescer.run(3))
      // Sent in the same turn as the third item arrived, long before the round trip (200 ms).
      expect(sent.map((batch) => batch.items)).toEqual([[1, 2, 3]])
      sent[0]!.finish()
      expect(await Promise.all(runs)).toEqual(['many 1', 'many 2', 'many 3'])
    })

    it('waits nowhere when linger says 0 (a quiet service)', async () => {
      const { coalescer, alone } = harness({ linger: () => 0, oneTakes: 30 })
      await coalescer.run(0)
      await turn()
      const next = coalescer.run(1)
      await turn()
      expect(alone).toEqual([0, 1])
      expect(await next).toBe('one 1')
    })

    it('never holds items behind a batch on its way: they go as soon as it is back', async () => {
      const { coalescer, sent, alone } = harness({ linger: () => 10_000, fill: 2, oneTakes: 30 })
      await coalescer.run(0)
      await turn()
      const batch = [coalescer.run(1), coalescer.run(2)]
      expect(sent.map((sent) => sent.items)).toEqual([[1, 2]])
      const later = coalescer.run(3)
      await sleep(5)
      sent[0]!.finish()
      await Promise.all(batch)
      await turn()
      expect(alone).toEqual([0, 3])
      expect(await later).toBe('one 3')
    })

    it('tells each item how long it waited and how long its statement took', async () => {
      const timed: [number, number][] = []
      const coalescer = new Coalescer<number, number>({
        many: async (items) => items,
        one: async (item) => {
          await sleep(20)
          return item
        },
        shared: () => false,
        inFlight: 1,
        limit: 64,
        timed: (waited, took) => timed.push([waited, took]),
      })
      await coalescer.run(1)
      expect(timed).toHaveLength(1)
      expect(timed[0]![0]).toBeLessThan(20)
      expect(timed[0]![1]).toBeGreaterThanOrEqual(15)
    })
  })
})
