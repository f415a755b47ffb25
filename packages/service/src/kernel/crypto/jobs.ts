import type { AccountSpec, Curve, HashFunction, PayloadEncoding, TransactionType } from '@latchkey/protocol'
import { hexToBytes } from '@noble/hashes/utils.js'
import { openImportCiphertext } from './bundles.ts'
import { deriveAccount } from './derive.ts'
import { CryptoInputError } from './errors.ts'
import { generateMnemonic, normalizeMnemonic, seedOf, validateMnemonic } from './mnemonic.ts'
import type { Sealer } from './sealer.ts'
import { type RawSignature, signRawPayload } from './sign.ts'
import { type PolicyTransaction, signAndDescribeTransaction, signTransaction } from './signTransaction.ts'

/**
 * The service's CPU-heavy key work as self-contained jobs: everything a job needs travels with it
 * (sealed keys, never open ones), and it answers with plain data, so a job runs the same in the
 * request's thread or in a worker thread (`@latchkey/service/node`'s `cryptoWorkers`). Keys are
 * opened inside the job and wiped before it answers.
 */
export type CryptoJob = SignPayloadsJob | SignTransactionJob | NewWalletJob | ImportWalletJob

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

/** Signs an unsigned transaction with one sealed account key (`sign_transaction`). */
export interface SignTransactionJob {
  kind: 'signTransaction'
  sealedKey: string
  type: TransactionType
  unsignedTransaction: string
  /** Also answer the transaction as a policy reads it (what a spending limit counts), from the same decoding. */
  describe?: boolean
}

export type SignTransactionResult =
  | { signedTransaction: string; policy?: PolicyTransaction }
  /** Bad input (the activity fails naming `field`, a parameter's name). */
  | { error: { message: string; field?: string } }

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

/**
 * An imported wallet: its mnemonic opened from an HPKE bundle encrypted to an import key (given
 * sealed), checked, its accounts derived, everything sealed again under the master key.
 */
export interface ImportWalletJob {
  kind: 'importWallet'
  /** The import key's private half, sealed. */
  sealedTargetKey: string
  /** Its public half (hex, uncompressed). */
  targetPublicKey: string
  encryptedBundle: string
  accounts: AccountSpec[]
  /** The master-key version to seal under (the runtime sets it). @default the newest the runner holds */
  sealVersion?: number
}

/** Like a new wallet's; an error says why the bundle or an account would not do (the activity names the field). */
export type ImportWalletResult = NewWalletResult

export type CryptoResult<J extends CryptoJob> = J extends SignPayloadsJob
  ? SignPayloadsResult
  : J extends SignTransactionJob
    ? SignTransactionResult
    : J extends ImportWalletJob
      ? ImportWalletResult
      : NewWalletResult

/** Runs jobs: in this thread (`inlineCrypto`) or in worker threads. */
/** What a runner tells of a job it ran (`CryptoRunner.run`'s `timing`). */
export interface JobTiming {
  /** The job's own time where it ran, ms (the rest of the caller's wait is queueing and messages). */
  computeMs?: number
}

export interface CryptoRunner {
  /** Runs `job`; a runner that can tell the job's own time writes it in `timing`. */
  run<J extends CryptoJob>(job: J, timing?: JobTiming): Promise<CryptoResult<J>>
  close?(): Promise<void>
  /** False when a worker the runner relies on is gone (readiness reports it). @default alive */
  alive?(): boolean
  /** Resolves once the runner can take jobs; rejects when it cannot start (the server refuses to). */
  ready?(): Promise<void>
}

/** Native primitives a runner may lend its jobs (the Node worker threads do). */
export interface NativeCrypto {
  /** P-256 ECDH: the 32-byte shared x-coordinate of `privateKey` with the uncompressed `publicKey`. */
  ecdhP256?: (privateKey: Uint8Array, publicKey: Uint8Array) => Uint8Array
}

/** Runs one job with the service's sealer. */
export async function runCryptoJob<J extends CryptoJob>(
  job: J,
  sealer: Sealer,
  native: NativeCrypto = {},
): Promise<CryptoResult<J>> {
  const run =
    job.kind === 'signPayloads'
      ? signPayloads(job, sealer)
      : job.kind === 'signTransaction'
        ? signTransactionJob(job, sealer)
        : job.kind === 'importWallet'
          ? importWallet(job, sealer, native)
          : newWallet(job, sealer)
  return run as Promise<CryptoResult<J>>
}

/** Jobs run in the calling thread (browsers, tests, `--crypto-threads 0`). */
export const inlineCrypto = (sealer: Sealer): CryptoRunner => ({
  async run(job, timing) {
    const started = performance.now()
    try {
      return await runCryptoJob(job, sealer)
    } finally {
      if (timing) timing.computeMs = performance.now() - started
    }
  },
})

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

async function signTransactionJob(job: SignTransactionJob, sealer: Sealer): Promise<SignTransactionResult> {
  const privateKey = sealer.open(job.sealedKey)
  try {
    const input = { type: job.type, unsignedTransaction: job.unsignedTransaction, privateKey }
    return job.describe ? signAndDescribeTransaction(input) : { signedTransaction: signTransaction(input) }
  } catch (error) {
    if (!(error instanceof CryptoInputError)) throw error
    return { error: { message: error.message, ...(error.field ? { field: error.field } : {}) } }
  } finally {
    privateKey.fill(0)
  }
}

function newWallet(job: NewWalletJob, sealer: Sealer): Promise<NewWalletResult> {
  return sealedWallet(() => generateMnemonic(job.mnemonicLength), job, sealer)
}

/** Opens the bundle with the sealed import key; anything wrong with it is the job's `error`, never a throw. */
async function importWallet(
  job: ImportWalletJob,
  sealer: Sealer,
  native: NativeCrypto,
): Promise<ImportWalletResult> {
  let plaintext: Uint8Array
  const targetPrivateKey = sealer.open(job.sealedTargetKey)
  try {
    plaintext = await openImportCiphertext({
      encryptedBundle: job.encryptedBundle,
      targetPrivateKey,
      targetPublicKey: hexToBytes(job.targetPublicKey),
      ...(native.ecdhP256 ? { ecdh: native.ecdhP256 } : {}),
    })
  } catch (error) {
    if (error instanceof CryptoInputError) return { error: error.message }
    throw error
  } finally {
    targetPrivateKey.fill(0)
  }
  const mnemonic = normalizeMnemonic(new TextDecoder().decode(plaintext))
  plaintext.fill(0)
  if (!validateMnemonic(mnemonic)) return { error: 'the bundle does not hold a BIP-39 mnemonic' }
  return sealedWallet(() => mnemonic, { ...job, mnemonicLength: mnemonic.split(' ').length }, sealer)
}

/** The mnemonic `make` gives, its accounts derived, everything sealed. */
async function sealedWallet(
  make: () => string,
  job: { mnemonicLength: number; accounts: AccountSpec[]; sealVersion?: number },
  sealer: Sealer,
): Promise<NewWalletResult> {
  let seed: Uint8Array | undefined
  try {
    const mnemonic = make()
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
