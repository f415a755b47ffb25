/**
 * `items.map(fn)` for an async `fn`, one item after another (inside a transaction every query
 * goes through one connection, in order). Resolves to the results in order.
 */
export async function mapInOrder<T, R>(
  items: readonly T[],
  fn: (item: T, index: number) => Promise<R> | R,
): Promise<R[]> {
  const results: R[] = []
  for (let index = 0; index < items.length; index++) results.push(await fn(items[index]!, index))
  return results
}

/**
 * Runs `fn` on a later turn of the event loop, after the I/O callbacks that are ready: Node's
 * `setImmediate`, or a zero timeout where there is none (the service in a browser, as the stories
 * run it).
 */
export function nextTurn(fn: () => void): void {
  if (typeof globalThis.setImmediate === 'function') globalThis.setImmediate(fn)
  else setTimeout(fn, 0)
}

/** A look taken now and then every `intervalMs` in the background (`lookEvery`). */
export interface RepeatedLook {
  /** Looks now; a call while a look is under way waits for that one instead of starting another. */
  refresh(): Promise<void>
  /** No look after the one under way (its timer does not keep the process alive either way). */
  stop(): void
}

/**
 * Runs `look` now, then `intervalMs` after each look ends, one at a time, until stopped: a
 * background watch's loop (the sponsors' balances, the open sends). A look that rejects is
 * dropped (the watch keeps what its last good look found), and the next one is still scheduled.
 */
export function lookEvery(intervalMs: number, look: () => Promise<void>): RepeatedLook {
  let running: Promise<void> | undefined
  let timer: ReturnType<typeof setTimeout> | undefined
  let stopped = false
  const refresh = () =>
    (running ??= look()
      .catch(() => undefined)
      .finally(() => {
        running = undefined
      }))
  const loop = () => {
    if (stopped) return
    void refresh().then(() => {
      if (stopped) return
      timer = setTimeout(loop, intervalMs)
      ;(timer as { unref?: () => void }).unref?.()
    })
  }
  loop()
  return {
    refresh,
    stop() {
      stopped = true
      clearTimeout(timer)
    },
  }
}
