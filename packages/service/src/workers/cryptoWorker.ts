// The worker thread of `cryptoWorkers`: runs crypto jobs with the sealer of the master key it was
// started with, one message in, one message out.
import { parentPort, workerData } from 'node:worker_threads'
import { type CryptoJob, runCryptoJob } from '../crypto/jobs.ts'
import { createSealer } from '../crypto/sealer.ts'

const key = workerData.masterKey as Uint8Array
const sealer = createSealer(key)
key.fill(0)

parentPort!.on('message', async ({ id, job }: { id: number; job: CryptoJob }) => {
  try {
    parentPort!.postMessage({ id, result: await runCryptoJob(job, sealer) })
  } catch (error) {
    parentPort!.postMessage({ id, failure: (error as Error)?.message ?? String(error) })
  }
})
