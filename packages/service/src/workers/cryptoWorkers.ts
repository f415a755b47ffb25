import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { type CryptoJob, type CryptoResult, type CryptoRunner, inlineCrypto } from '../crypto/jobs.ts'
import { createSealer, type SealingKey } from '../crypto/sealer.ts'

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
}

/**
 * Crypto jobs (signing, wallet derivation) in worker threads, so the thread that serves requests
 * never spends a millisecond on an elliptic-curve multiplication: pass it to `createService({
 * crypto })`. Each worker holds its own copy of the master key's sealer and gets sealed keys only.
 * A job goes to the worker with the fewest jobs in flight. A worker that dies fails its jobs (the
 * requests answer 500) and is replaced.
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
    const slots: { worker: Worker; pending: Map<number, Pending> }[] = []
    const start = (index: number) => {
      const worker = new Worker(entry, { workerData: { masterKeys }, eval: source })
      const slot = { worker, pending: new Map<number, Pending>() }
      slots[index] = slot
      worker.unref()
      worker.on('message', (message: { id: number; result?: unknown; failure?: string }) => {
        const pending = slot.pending.get(message.id)
        if (!pending) return
        slot.pending.delete(message.id)
        if (message.failure !== undefined) pending.reject(new Error(`crypto worker: ${message.failure}`))
        else pending.resolve(message.result)
      })
      const fail = (error: Error) => {
        for (const pending of slot.pending.values()) pending.reject(error)
        slot.pending.clear()
        if (!closed && slots[index] === slot) start(index)
      }
      worker.on('error', fail)
      worker.on('exit', (code) => fail(new Error(`crypto worker exited with code ${code}`)))
    }
    for (let index = 0; index < threads; index++) start(index)
    return {
      run<J extends CryptoJob>(job: J): Promise<CryptoResult<J>> {
        if (closed) return Promise.reject(new Error('crypto workers are closed'))
        let slot = slots[0]!
        for (const candidate of slots) if (candidate.pending.size < slot.pending.size) slot = candidate
        const id = nextId++
        return new Promise((resolve, reject) => {
          slot.pending.set(id, { resolve: resolve as (result: unknown) => void, reject })
          slot.worker.postMessage({ id, job })
        })
      },
      // A worker that died is replaced at once; until it is up, the runner is not whole.
      alive: () => !closed && slots.every((slot) => slot.worker.threadId >= 0),
      async close() {
        closed = true
        await Promise.all(slots.map((slot) => slot.worker.terminate()))
      },
    }
  }
}
