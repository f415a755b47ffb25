/**
 * Where a request's time goes, stage by stage (issue 42): each stage a histogram of durations in
 * ms, filled by a clock read on either side of the stage and one array increment, so it stays on
 * in production at no cost worth measuring. The dev service answers them at `GET /dev/timings`
 * (`DELETE` empties them), which `bench:service` reads around a paced run.
 *
 * Stages of an activity's submission (they nest: `admit` holds `authenticate` and the request's
 * reads ahead, `transaction` holds the waits for a statement or a commit group and the database):
 * - `read`: the body read off the socket and parsed as JSON
 * - `authenticate`: the stamp checked (and the credential read)
 * - `admit`: admission whole: authentication, the reads ahead, the organization, the plugins
 * - `precompute`: the handler's key work: its reads and its crypto job, until done (beside `prepare`)
 * - `transaction`: the activity recorded, decided and run, until its commit
 * - `render`: the answer serialized as JSON
 * - `submit`: the whole handler, from before `read` to after `render`
 * The store's and the crypto runner's own:
 * - `statement wait`: a request's part of a shared statement waiting for it to be sent (PostgreSQL)
 * - `statement`: that statement on its way to the database and back
 * - `commit wait`: a transaction waiting for its commit group to start (SQLite; on PostgreSQL, a
 *   transaction with `locks` waiting for its lock's group, behind the group that holds the lock)
 * - `commit group`: the group that held it, from its begin to its commit
 * - `commit`: a group's commit statement alone, a count a group (SQLite: the WAL written and
 *   synced on the thread that serves requests, and a checkpoint of the WAL when one is due)
 * - `crypto queue`: a crypto job waiting for its worker (and the messages both ways)
 * - `crypto`: the job's own time in the worker (or inline)
 * The process's, once `watchProcess` runs (the dev service):
 * - `event loop`: how late a 1 ms timer fires on the thread that serves requests (its p99 and max
 *   are the longest the thread was busy with one thing: a GC pause, a synchronous SQLite call)
 * - `gc`: each garbage collection's pause (`total`: all of them)
 */
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks'

export type Stage =
  | 'read'
  | 'authenticate'
  | 'admit'
  | 'precompute'
  | 'transaction'
  | 'render'
  | 'submit'
  | 'statement wait'
  | 'statement'
  | 'commit wait'
  | 'commit group'
  | 'crypto queue'
  | 'crypto'
  | 'commit'
  | 'event loop'
  | 'gc'

/** Every stage, in the order a request meets them (what `snapshot` lists). */
export const STAGES: readonly Stage[] = [
  'read',
  'authenticate',
  'admit',
  'statement wait',
  'statement',
  'precompute',
  'crypto queue',
  'crypto',
  'transaction',
  'commit wait',
  'commit group',
  'commit',
  'render',
  'submit',
  'event loop',
  'gc',
]

/** One stage's figures: how many, and its median, 99th percentile, largest and sum, in ms. */
export interface StageFigures {
  count: number
  p50: number
  p99: number
  max: number
  total: number
}

/** Buckets grow by this factor: a percentile is known to within 5%. */
const GROWTH = 1.05
/** The first bucket's upper bound, ms; everything below falls in it. */
const SMALLEST = 0.005
/** Buckets up to ~2 minutes; longer durations count in the last. */
const BUCKETS = Math.ceil(Math.log(120_000 / SMALLEST) / Math.log(GROWTH)) + 1
const LOG_GROWTH = Math.log(GROWTH)

/** The bucket a duration falls in. */
export const bucketOf = (ms: number): number =>
  ms <= SMALLEST ? 0 : Math.min(BUCKETS - 1, Math.ceil(Math.log(ms / SMALLEST) / LOG_GROWTH))

/** A bucket's upper bound, ms. */
const upperBound = (bucket: number): number => SMALLEST * GROWTH ** bucket

class Histogram {
  readonly counts = new Uint32Array(BUCKETS)
  count = 0
  max = 0
  total = 0

  record(ms: number): void {
    this.counts[bucketOf(ms)]!++
    this.count++
    this.total += ms
    if (ms > this.max) this.max = ms
  }

  /** The upper bound of the bucket holding the `p`th percentile (never above the largest seen). */
  percentile(p: number): number {
    const rank = Math.max(1, Math.ceil((p / 100) * this.count))
    let seen = 0
    for (let bucket = 0; bucket < BUCKETS; bucket++) {
      seen += this.counts[bucket]!
      if (seen >= rank) return Math.min(upperBound(bucket), this.max)
    }
    return this.max
  }
}

/** The service's stage histograms (`Runtime.timings`). */
export class StageTimings {
  private histograms = new Map<Stage, Histogram>()
  /** Stages kept elsewhere (the event loop's delay, in Node's histogram), read at `snapshot`. */
  private sources = new Map<Stage, { figures(): StageFigures | undefined; reset(): void }>()

  /** Counts `ms` (a duration, from two `performance.now()` reads) for `stage`. */
  record(stage: Stage, ms: number): void {
    let histogram = this.histograms.get(stage)
    if (!histogram) {
      histogram = new Histogram()
      this.histograms.set(stage, histogram)
    }
    histogram.record(ms)
  }

  /** Runs `work`, counting the time until it settles for `stage`. */
  async time<R>(stage: Stage, work: () => Promise<R>): Promise<R> {
    const started = performance.now()
    try {
      return await work()
    } finally {
      this.record(stage, performance.now() - started)
    }
  }

  /** Each stage met since the last `reset`, in `STAGES` order. */
  snapshot(): Partial<Record<Stage, StageFigures>> {
    const figures: Partial<Record<Stage, StageFigures>> = {}
    for (const stage of STAGES) {
      const source = this.sources.get(stage)?.figures()
      if (source) figures[stage] = source
      const histogram = this.histograms.get(stage)
      if (!histogram || histogram.count === 0) continue
      figures[stage] = {
        count: histogram.count,
        p50: histogram.percentile(50),
        p99: histogram.percentile(99),
        max: histogram.max,
        total: histogram.total,
      }
    }
    return figures
  }

  /** Forgets everything counted so far (the bench, before the run it looks at). */
  reset(): void {
    this.histograms = new Map()
    for (const source of this.sources.values()) source.reset()
  }

  /**
   * Counts the process's own stages from now until the function returned is called: `event loop`
   * (Node's delay monitor, a 1 ms timer) and `gc` (each pause, from a performance observer). Both
   * cost the process a little: the dev service runs them, production does not.
   */
  watchProcess(): () => void {
    const loop = monitorEventLoopDelay({ resolution: 1 })
    loop.enable()
    this.sources.set('event loop', {
      figures: () =>
        loop.count === 0
          ? undefined
          : {
              count: loop.count,
              p50: loop.percentile(50) / 1e6,
              p99: loop.percentile(99) / 1e6,
              max: loop.max / 1e6,
              total: (loop.mean * loop.count) / 1e6,
            },
      reset: () => loop.reset(),
    })
    const gc = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) this.record('gc', entry.duration)
    })
    gc.observe({ entryTypes: ['gc'] })
    return () => {
      loop.disable()
      gc.disconnect()
      this.sources.delete('event loop')
    }
  }
}
