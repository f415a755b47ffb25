/**
 * What runs until the service stops (a delivery worker, a poller) joins its drain here: on SIGTERM
 * the server stops taking requests, marks the service draining (`/readyz` answers 503) and calls
 * every hook, which finishes its work or hands it back before `deadline` aborts. No `node:*`
 * imports: `createService` makes one.
 */
export type DrainHook = (deadline: AbortSignal) => Promise<void> | void

export class Lifecycle {
  private readonly hooks = new Set<DrainHook>()
  private drained: Promise<void> | undefined
  private announced = false

  /**
   * True from the moment a drain was announced (`/readyz` answers 503, answers close their
   * connections) or began.
   */
  get draining(): boolean {
    return this.announced || this.drained !== undefined
  }

  /**
   * Says the service is going away without stopping anything yet: `/readyz` answers 503 and
   * answers close their connections, while requests are still served (the server's grace period,
   * for a load balancer to take the instance out). `drain` stops the work later.
   */
  announceDrain(): void {
    this.announced = true
  }

  /** Registers `hook` for the drain; the function returned unregisters it (a worker that stopped early). */
  onDrain(hook: DrainHook): () => void {
    this.hooks.add(hook)
    return () => this.hooks.delete(hook)
  }

  /**
   * Marks the service draining and runs every hook at once; resolves when all are done (one that
   * throws does not stop the others). Later calls return the same drain.
   */
  drain(deadline: AbortSignal = new AbortController().signal): Promise<void> {
    this.drained ??= Promise.allSettled([...this.hooks].map(async (hook) => hook(deadline))).then(
      () => undefined,
    )
    return this.drained
  }
}
