import type { AccountSpec, Curve, HashFunction, PayloadEncoding } from '@latchkey/protocol'
import { deriveAccount } from './derive.ts'
import { CryptoInputError } from './errors.ts'
import { generateMnemonic, seedOf } from './mnemonic.ts'
import type { Sealer } from './sealer.ts'
import { type RawSignature, signRawPayload } from './sign.ts'

/**
 * The service's CPU-heavy key work as self-contained jobs: everything a job needs travels with it
 * (sealed keys, never open ones), and it answers with plain data, so a job runs the same in the
 * request's thread or in a worker thread (`@latchkey/service/node`'s `cryptoWorkers`). Keys are
 * opened inside the job and wiped before it answers.
 */
export type CryptoJob = SignPayloadsJob | NewWalletJob

/** Signs payloads with one sealed account key. */
export interface SignPayloadsJob {
  kind: 'signPayloads'
  sealedKey: string
  curve: Curve
  payloads: string[]
  encoding: PayloadEncoding
  hashFunction: HashFunction
}

export type SignPayloadsResult =
  | { signatures: RawSignature[] }
  /** The first payload that could not be signed (bad input: the activity fails naming it). */
  | { error: { message: string; field?: string; index: number } }

/** A fresh mnemonic, its accounts derived, everything sealed. */
export interface NewWalletJob {
  kind: 'newWallet'
  mnemonicLength: number
  accounts: AccountSpec[]
  /** The master-key version to seal under (the runtime sets it). @default the newest the runner holds */
  sealVersion?: number
}

export type NewWalletResult =
  | {
      sealedMnemonic: string
      mnemonicLength: number
      accounts: { address: string; publicKey: string; sealedPrivateKey: string }[]
    }
  /** Bad input: the activity derives again in its own thread to name the field at fault. */
  | { error: string }

export type CryptoResult<J extends CryptoJob> = J extends SignPayloadsJob
  ? SignPayloadsResult
  : NewWalletResult

/** Runs jobs: in this thread (`inlineCrypto`) or in worker threads. */
export interface CryptoRunner {
  run<J extends CryptoJob>(job: J): Promise<CryptoResult<J>>
  close?(): Promise<void>
  /** False when a worker the runner relies on is gone (readiness reports it). @default alive */
  alive?(): boolean
  /** Resolves once the runner can take jobs; rejects when it cannot start (the server refuses to). */
  ready?(): Promise<void>
}

/** Runs one job with the service's sealer. */
export async function runCryptoJob<J extends CryptoJob>(job: J, sealer: Sealer): Promise<CryptoResult<J>> {
  return (job.kind === 'signPayloads' ? signPayloads(job, sealer) : newWallet(job, sealer)) as Promise<
    CryptoResult<J>
  >
}

/** Jobs run in the calling thread (browsers, tests, `--crypto-threads 0`). */
export const inlineCrypto = (sealer: Sealer): CryptoRunner => ({ run: (job) => runCryptoJob(job, sealer) })

async function signPayloads(job: SignPayloadsJob, sealer: Sealer): Promise<SignPayloadsResult> {
  const privateKey = sealer.open(job.sealedKey)
  try {
    const signatures: RawSignature[] = []
    for (const [index, payload] of job.payloads.entries()) {
      try {
        signatures.push(
          signRawPayload({
            curve: job.curve,
            privateKey,
            payload,
            encoding: job.encoding,
            hashFunction: job.hashFunction,
          }),
        )
      } catch (error) {
        if (!(error instanceof CryptoInputError)) throw error
        return { error: { message: error.message, ...(error.field ? { field: error.field } : {}), index } }
      }
    }
    return { signatures }
  } finally {
    privateKey.fill(0)
  }
}

async function newWallet(job: NewWalletJob, sealer: Sealer): Promise<NewWalletResult> {
  let seed: Uint8Array | undefined
  try {
    const mnemonic = generateMnemonic(job.mnemonicLength)
    seed = await seedOf(mnemonic)
    const accounts = job.accounts.map((spec) => {
      const derived = deriveAccount(seed!, spec)
      const sealedPrivateKey = sealer.seal(derived.privateKey, job.sealVersion)
      derived.privateKey.fill(0)
      return { address: derived.address, publicKey: derived.publicKey, sealedPrivateKey }
    })
    return {
      sealedMnemonic: sealer.seal(mnemonic, job.sealVersion),
      mnemonicLength: job.mnemonicLength,
      accounts,
    }
  } catch (error) {
    if (error instanceof CryptoInputError) return { error: error.message }
    throw error
  } finally {
    seed?.fill(0)
  }
}
