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
   * How long, in ms, items may wait for others under a steady stream (read at each batch; 0: not
   * at all): an item that comes less than this long after the last batch was sent waits until that
   * much time has passed since, or until `fill` items wait, whichever is first. An item that comes
   * after a quiet spell, or while a batch is on its way, waits no longer than today.
   */
  linger?: () => number
  /** Items that end a `linger` wait at once. */
  fill?: number
}

interface Waiting<T, R> {
  item: T
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
  /** When the last batch was sent (`performance.now()`). */
  private lastSent = Number.NEGATIVE_INFINITY
  /** Batches sent and the items they carried (`bench:service` prints their ratio). */
  readonly counts = { batches: 0, items: 0 }

  constructor(private readonly options: CoalescerOptions<T, R>) {}

  run(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject })
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
        const wait = this.lastSent + (this.options.linger?.() ?? 0) - performance.now()
        // Requests whose bytes arrived in the same turn of the event loop join this batch; under a
        // steady stream (`linger`), those of the next few milliseconds too.
        if (wait > 0) this.timer = setTimeout(go, wait)
        else setImmediate(go)
      }
    })
  }

  private dispatch(): void {
    while (this.sending < this.options.inFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.options.limit)
      this.lastSent = performance.now()
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
    if (batch.length === 1) {
      const [only] = batch as [Waiting<T, R>]
      await one(only.item).then(only.resolve, only.reject)
      return
    }
    let answers: R[]
    try {
      answers = await many(batch.map((waiting) => waiting.item))
    } catch (error) {
      if (shared(error)) {
        for (const waiting of batch) waiting.reject(error)
        return
      }
      // One item's doing, or the batch's: each alone, so each gets its own answer.
      await Promise.all(batch.map((waiting) => one(waiting.item).then(waiting.resolve, waiting.reject)))
      return
    }
    batch.forEach((waiting, index) => {
      waiting.resolve(answers[index]!)
    })
  }
}
