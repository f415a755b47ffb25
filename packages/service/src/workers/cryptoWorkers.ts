import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { reportUnexpected } from '../kernel/base/ServiceLogger.ts'
import {
  type CryptoJob,
  type CryptoResult,
  type CryptoRunner,
  inlineCrypto,
  type JobTiming,
} from '../kernel/crypto/jobs.ts'
import { createSealer, type SealingKey } from '../kernel/crypto/sealer.ts'

/** A worker that failed is started again after this long, doubling while it keeps failing to start. */
const RESTART_MS = 100
const MAX_RESTART_MS = 10_000

/** How long `ready` waits for every worker to load. */
const START_TIMEOUT_MS = 60_000

export interface CryptoWorkersOptions {
  /**
   * Worker threads that sign and derive keys. With 0, jobs run in the request's thread.
   * @default as many as the cores Node may use (the thread that serves requests mostly waits on
   * I/O; on 2 cores, 2 workers signed 9% faster than 1, using the CPU one left idle)
   */
  threads?: number
}

interface Pending {
  resolve(result: unknown): void
  reject(error: Error): void
  /** Where the job's own time goes (`CryptoRunner.run`'s `timing`). */
  timing: JobTiming | undefined
}

/**
 * Crypto jobs (signing, wallet derivation) in worker threads, so the thread that serves requests
 * never spends a millisecond on an elliptic-curve multiplication: pass it to `createService({
 * crypto })`. Each worker holds its own copy of the master key's sealer and gets sealed keys only.
 * A job goes to the worker with the fewest jobs in flight. A worker that dies fails its jobs (the
 * requests answer 500), is logged through the service's logger (`reportUnexpected`) and is
 * replaced; one that cannot start is tried again with a growing delay. The runner is `alive` (what
 * `/readyz` reports as `crypto`) only while every worker has loaded and said so.
 */
export function cryptoWorkers(
  options: CryptoWorkersOptions = {},
): (masterKeys: Uint8Array | readonly SealingKey[]) => CryptoRunner {
  const threads = options.threads ?? Math.max(1, availableParallelism())
  return (masterKeys) => {
    if (threads < 1) return inlineCrypto(createSealer(masterKeys))
    // In the source tree (tests, tsx) the worker is TypeScript: it registers tsx's loader first.
    const source = import.meta.url.endsWith('.ts')
    const url = new URL(source ? './cryptoWorker.ts' : './cryptoWorker.js', import.meta.url)
    const entry = source
      ? `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url.href)}) })`
      : url
    let nextId = 0
    let closed = false
    const slots: { worker: Worker; pending: Map<number, Pending>; ready: boolean; down: boolean }[] = []
    /** Failures in a row of each slot's workers before one loaded. */
    const failures: number[] = []
    let lastError: Error | undefined
    const start = (index: number) => {
      const worker = new Worker(entry, { workerData: { masterKeys }, eval: source })
      const slot = { worker, pending: new Map<number, Pending>(), ready: false, down: false }
      slots[index] = slot
      worker.unref()
      worker.on(
        'message',
        (message: { id: number; result?: unknown; failure?: string; ready?: true; ms?: number }) => {
          if (message.ready) {
            slot.ready = true
            failures[index] = 0
            return
          }
          const pending = slot.pending.get(message.id)
          if (!pending) return
          slot.pending.delete(message.id)
          if (pending.timing && message.ms !== undefined) pending.timing.computeMs = message.ms
          if (message.failure !== undefined) pending.reject(new Error(`crypto worker: ${message.failure}`))
          else pending.resolve(message.result)
        },
      )
      const fail = (error: Error) => {
        if (slot.down) return
        slot.down = true
        slot.ready = false
        for (const pending of slot.pending.values()) pending.reject(error)
        slot.pending.clear()
        if (closed || slots[index] !== slot) return
        reportUnexpected(error, 'crypto-worker')
        lastError = error
        failures[index] = (failures[index] ?? 0) + 1
        const delay = Math.min(MAX_RESTART_MS, RESTART_MS * 2 ** (failures[index]! - 1))
        setTimeout(() => {
          if (!closed && slots[index] === slot) start(index)
        }, delay).unref()
      }
      worker.on('error', fail)
      worker.on('exit', (code) => fail(new Error(`crypto worker exited with code ${code}`)))
    }
    for (let index = 0; index < threads; index++) start(index)
    return {
      run<J extends CryptoJob>(job: J, timing?: JobTiming): Promise<CryptoResult<J>> {
        if (closed) return Promise.reject(new Error('crypto workers are closed'))
        // The least busy worker that is up; a job is never left with one that failed.
        let slot: (typeof slots)[number] | undefined
        for (const candidate of slots)
          if (!candidate.down && (!slot || candidate.pending.size < slot.pending.size)) slot = candidate
        if (!slot)
          return Promise.reject(
            new Error(`crypto workers are not running: ${lastError?.message ?? 'starting again'}`),
          )
        const id = nextId++
        return new Promise((resolve, reject) => {
          slot.pending.set(id, { resolve: resolve as (result: unknown) => void, reject, timing })
          slot.worker.postMessage({ id, job })
        })
      },
      // Until every worker has loaded (a replacement too), the runner is not whole.
      alive: () => !closed && slots.every((slot) => slot.ready),
      // Every worker loaded once; a worker that failed to start three times in a row fails it.
      async ready() {
        const until = performance.now() + START_TIMEOUT_MS
        while (closed || !slots.every((slot) => slot.ready)) {
          if (closed) throw new Error('crypto workers are closed')
          if (failures.some((count) => count >= 3))
            throw new Error(`crypto workers cannot start: ${lastError?.message ?? 'unknown error'}`)
          if (performance.now() > until)
            throw new Error(`crypto workers did not start within ${START_TIMEOUT_MS / 1000} s`)
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
      },
      async close() {
        closed = true
        await Promise.all(slots.map((slot) => slot.worker.terminate()))
      },
    }
  }
}
