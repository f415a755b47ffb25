/**
 * Runs the tasks given one key one after another, in the order given, and tasks of different
 * keys at once; in this process only. A key with nothing queued holds no memory.
 */
export class KeyedQueue {
  readonly #tails = new Map<string, Promise<void>>()

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const result = (this.#tails.get(key) ?? Promise.resolve()).then(task)
    const tail = result.then(
      () => undefined,
      () => undefined,
    )
    this.#tails.set(key, tail)
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key)
    })
    return result
  }

  /** `task` once every key of `keys` is its turn (taken in sorted order, so two tasks never wait on each other). */
  runAll<T>(keys: readonly string[], task: () => Promise<T>): Promise<T> {
    return [...new Set(keys)]
      .sort()
      .reduceRight<() => Promise<T>>((inner, key) => () => this.run(key, inner), task)()
  }

  /** Keys with a task queued or running. */
  get size(): number {
    return this.#tails.size
  }
}
