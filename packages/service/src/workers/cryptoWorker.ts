// The worker thread of `cryptoWorkers`: runs crypto jobs with the sealer of the master keys it was
// started with, one message in, one message out.
import { parentPort, workerData } from 'node:worker_threads'
import { type CryptoJob, type NativeCrypto, runCryptoJob } from '../kernel/crypto/jobs.ts'
import { createSealer, type SealingKey } from '../kernel/crypto/sealer.ts'
import { nativeEcdhP256, nativeGcm } from './nativeCiphers.ts'

const keys = workerData.masterKeys as Uint8Array | SealingKey[]
// Every signing opens its sealed key: OpenSSL's AES-GCM, not JavaScript's (issue 42).
const sealer = createSealer(keys, nativeGcm)
for (const key of keys instanceof Uint8Array ? [keys] : keys.map((entry) => entry.key)) key.fill(0)

// OpenSSL's P-256 ECDH (an import bundle's opening): some 20 times faster than noble's.
const native: NativeCrypto = { ecdhP256: nativeEcdhP256 }

// Loaded and holding its keys: the runner counts this worker as up from here on.
parentPort!.postMessage({ ready: true })

parentPort!.on('message', async ({ id, job }: { id: number; job: CryptoJob }) => {
  // The job's own time goes back with it (the service's `crypto` stage; the rest is queueing).
  const started = performance.now()
  try {
    const result = await runCryptoJob(job, sealer, native)
    parentPort!.postMessage({ id, result, ms: performance.now() - started })
  } catch (error) {
    parentPort!.postMessage({ id, failure: (error as Error)?.message ?? String(error) })
  }
})
