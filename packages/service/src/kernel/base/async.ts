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
