import type { EventSink } from './base/events.ts'
import type { CryptoRunner } from './crypto/index.ts'

/**
 * `runner` reporting each job's start and end (`crypto.started`, `crypto.finished` with its time),
 * from which the metrics keep the queue depth and the job-time histogram.
 */
export function observeCrypto(runner: CryptoRunner, events: EventSink): CryptoRunner {
  return {
    async run(job) {
      events.emit('crypto.started', { kind: job.kind })
      const started = performance.now()
      let outcome: 'ok' | 'error' = 'error'
      try {
        const result = await runner.run(job)
        outcome = 'ok'
        return result
      } finally {
        events.emit('crypto.finished', {
          kind: job.kind,
          outcome,
          seconds: (performance.now() - started) / 1000,
        })
      }
    },
    ...(runner.close ? { close: () => runner.close!() } : {}),
    ...(runner.alive ? { alive: () => runner.alive!() } : {}),
  }
}
