/**
 * The services this process created and has not closed. A test file that leaves its services open
 * leaves their background loops running (the job worker's poll, the send worker, the watches): in
 * a worker whose files share one module registry, those loops go on under the next files, and a
 * file that fakes the clock (`vi.useFakeTimers`) takes over their timers and has to run every poll
 * of every service left behind while it advances. The test setup closes, at the end of each file,
 * what the file left open (`closeOpenServices`). A module of its own with no imports, so that a
 * setup file can load it without loading the service (a file that mocks one of its modules).
 */

interface Closable {
  close(): Promise<void>
}

const open = new Set<Closable>()

/** Notes a new service as open; the function returned notes it closed. */
export function noteOpen(service: Closable): () => void {
  open.add(service)
  return () => {
    open.delete(service)
  }
}

/** Closes every service still open (each on its own: one that fails to close stops no other). */
export async function closeOpenServices(): Promise<void> {
  const services = [...open]
  open.clear()
  await Promise.allSettled(services.map((service) => service.close()))
}

/** The services open now, for `closeOpenedSince`. */
export function openNow(): ReadonlySet<unknown> {
  return new Set(open)
}

/**
 * Closes every service opened since `before` (`openNow`) and still open: what one test made and
 * left, while what its file made before it (a `beforeAll`'s) stays.
 */
export async function closeOpenedSince(before: ReadonlySet<unknown>): Promise<void> {
  const services = [...open].filter((service) => !before.has(service))
  for (const service of services) open.delete(service)
  await Promise.allSettled(services.map((service) => service.close()))
}
