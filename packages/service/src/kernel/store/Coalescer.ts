/** How `Coalescer` sends its batches. */
export interface CoalescerOptions<T, R> {
  /**
   * Sends `items` as one unit of work (one statement) and answers each, in order. When it throws,
   * every item of the batch is sent again on its own through `one` (unless `shared` says the error
   * is not the items' doing), so one item that makes the unit fail cannot fail the others.
   */
  many(items: T[]): Promise<R[]>
  /** Sends one item on its own: an item alone, and each item of a batch that failed. */
  one(item: T): Promise<R>
  /**
   * True for an error that would fail each item alone as well (the database is unavailable): the
   * whole batch gets it, instead of sending each item again.
   */
  shared(error: unknown): boolean
  /** Most batches on their way at once; items that come meanwhile wait for the next batch. */
  inFlight: number
  /** Most items in one batch. */
  limit: number
  /**
   * How long, in ms, at most, items may wait for others under a steady stream (read when the first
   * of them comes; 0: not at all). The wait is bounded further, by `lingerRule`: it never outlasts
   * one recent statement's round trip, counted from the oldest waiting item's arrival, and there is
   * none while the database has nothing else on its way (`busy`). `fill` waiting items end it.
   * An item that comes while a batch is on its way waits for that batch only, as without linger.
   */
  linger?: () => number
  /** Items that end a `linger` wait at once. */
  fill?: number
  /**
   * Whether the database has other work on its way now (another statement, a transaction): with
   * nothing, a lingering item would only leave it idle longer, so it goes at once. Default: busy.
   */
  busy?: () => boolean
  /** Told, for each item, how long it waited to be sent and how long its statement took, in ms. */
  timed?: (waited: number, took: number) => void
}

/**
 * How long the first item of a new batch waits for others (ms): sharing a statement saves each
 * item at most one statement's round trip, so waiting longer than one never lowers the time to
 * answer; and with the database idle, nothing is saved by waiting at all. The old rule (up to 40
 * ms after the last batch, whatever the statements cost) made every statement of a busy service
 * wait up to 40 ms; the extra latency kept more requests in flight, which kept the linger on
 * (issue 42, `bench/README.md`).
 */
export function lingerRule(options: { linger: number; roundTrip: number; busy: boolean }): number {
  if (options.linger <= 0 || !options.busy) return 0
  return Math.min(options.linger, options.roundTrip)
}

/** The weight of the newest round trip in the running estimate. */
const ROUND_TRIP_WEIGHT = 0.2

interface Waiting<T, R> {
  item: T
  /** When it came (`performance.now()`). */
  at: number
  resolve(value: R): void
  reject(error: unknown): void
}

/**
 * Merges the work of concurrent requests: items that arrive while `inFlight` batches are on their
 * way wait and go together, in one batch, as soon as one of them is back. An item is never added
 * to a batch already sent, so what a batch reads is as of after every item in it arrived, and an
 * item's answer comes only with its batch's. With few requests each item goes at once (after the
 * I/O callbacks of the same turn of the event loop, which it may join); under load the batches
 * grow with the wait, and the statements per request fall.
 */
export class Coalescer<T, R> {
  private readonly waiting: Waiting<T, R>[] = []
  private sending = 0
  private scheduled = false
  /** The `linger` wait under way, if any. */
  private timer: ReturnType<typeof setTimeout> | undefined
  /** A running estimate of one statement's round trip, ms (`lingerRule`); none measured yet: 0. */
  private roundTrip = 0
  /** Batches sent and the items they carried (`bench:service` prints their ratio). */
  readonly counts = { batches: 0, items: 0 }

  constructor(private readonly options: CoalescerOptions<T, R>) {}

  run(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, at: performance.now(), resolve, reject })
      if (this.timer && this.waiting.length >= (this.options.fill ?? Number.POSITIVE_INFINITY)) {
        clearTimeout(this.timer)
        this.timer = undefined
        this.scheduled = false
        this.dispatch()
        return
      }
      if (!this.scheduled && this.sending < this.options.inFlight) {
        this.scheduled = true
        const go = () => {
          this.timer = undefined
          this.scheduled = false
          this.dispatch()
        }
        const wait = lingerRule({
          linger: this.options.linger?.() ?? 0,
          roundTrip: this.roundTrip,
          busy: this.options.busy?.() ?? true,
        })
        // Requests whose bytes arrived in the same turn of the event loop join this batch; under a
        // steady stream on a busy database (`linger`), those of the next round trip too.
        if (wait > 0) this.timer = setTimeout(go, wait)
        else setImmediate(go)
      }
    })
  }

  private dispatch(): void {
    while (this.sending < this.options.inFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.options.limit)
      this.sending++
      this.counts.batches++
      this.counts.items += batch.length
      void this.send(batch).finally(() => {
        this.sending--
        this.dispatch()
      })
    }
  }

  private async send(batch: Waiting<T, R>[]): Promise<void> {
    const { many, one, shared } = this.options
    const sent = performance.now()
    // Once the statement is back, before anyone hears of it: its round trip, each item's times.
    const back = () => {
      const took = performance.now() - sent
      this.roundTrip =
        this.roundTrip === 0 ? took : this.roundTrip + ROUND_TRIP_WEIGHT * (took - this.roundTrip)
      const { timed } = this.options
      if (timed) for (const waiting of batch) timed(sent - waiting.at, took)
    }
    if (batch.length === 1) {
      const [only] = batch as [Waiting<T, R>]
      await one(only.item).then(
        (answer) => {
          back()
          only.resolve(answer)
        },
        (error: unknown) => {
          back()
          only.reject(error)
        },
      )
      return
    }
    let answers: R[]
    try {
      answers = await many(batch.map((waiting) => waiting.item))
    } catch (error) {
      if (shared(error)) {
        back()
        for (const waiting of batch) waiting.reject(error)
        return
      }
      // One item's doing, or the batch's: each alone, so each gets its own answer.
      await Promise.all(batch.map((waiting) => one(waiting.item).then(waiting.resolve, waiting.reject)))
      back()
      return
    }
    back()
    batch.forEach((waiting, index) => {
      waiting.resolve(answers[index]!)
    })
  }
}
