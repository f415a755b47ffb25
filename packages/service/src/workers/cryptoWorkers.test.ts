import { hexToBytes } from '@noble/hashes/utils.js'
import { afterAll, describe, expect, it } from 'vitest'
import { setUnexpectedErrorLogger } from '../kernel/base/ServiceLogger.ts'
import {
  createSealer,
  deriveAccount,
  type ImportWalletJob,
  inlineCrypto,
  mnemonicToSeed,
  type SignPayloadsJob,
  verifyRawSignature,
} from '../kernel/crypto/index.ts'
import { cryptoWorkers } from './cryptoWorkers.ts'

const masterKey = new Uint8Array(32).fill(7)
const sealer = createSealer(masterKey)
const workers = cryptoWorkers({ threads: 2 })(masterKey.slice())
afterAll(() => workers.close?.())

const ETH = {
  curve: 'CURVE_SECP256K1',
  pathFormat: 'PATH_FORMAT_BIP32',
  path: "m/44'/60'/0'/0/0",
  addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
} as const
const secret = hexToBytes('11'.repeat(32))
const job = (payloads: string[]): SignPayloadsJob => ({
  kind: 'signPayloads',
  sealedKey: sealer.seal(secret),
  curve: 'CURVE_SECP256K1',
  payloads,
  encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
  hashFunction: 'HASH_FUNCTION_KECCAK256',
})

describe('crypto jobs in worker threads', () => {
  it('sign a transaction as signTransaction does in the thread (and, asked, decode it as a policy reads it), and name the field of one that does not decode', async () => {
    const { decodeTransactionForPolicy, signTransaction } = await import(
      '../kernel/crypto/signTransaction.ts'
    )
    const { unsignedTransfer } = await import('../testing/unsignedTransfer.ts')
    const unsignedTransaction = unsignedTransfer({ value: 5n, nonce: 3 })
    const signing = (unsigned: string) =>
      ({
        kind: 'signTransaction',
        sealedKey: sealer.seal(secret),
        type: 'TRANSACTION_TYPE_ETHEREUM',
        unsignedTransaction: unsigned,
      }) as const
    const expected = signTransaction({
      type: 'TRANSACTION_TYPE_ETHEREUM',
      unsignedTransaction,
      privateKey: secret,
    })
    for (const runner of [workers, inlineCrypto(sealer)]) {
      expect(await runner.run(signing(unsignedTransaction))).toEqual({ signedTransaction: expected })
      expect(await runner.run({ ...signing(unsignedTransaction), describe: true })).toEqual({
        signedTransaction: expected,
        policy: decodeTransactionForPolicy('TRANSACTION_TYPE_ETHEREUM', unsignedTransaction),
      })
      expect(await runner.run(signing('0x1234'))).toEqual({
        error: {
          message: expect.stringMatching(/not an Ethereum transaction/),
          field: 'unsignedTransaction',
        },
      })
    }
  })

  it('open an import bundle (OpenSSL ECDH there, noble inline) to the same wallet, and refuse one for another key', async () => {
    const { hpkeSeal } = await import('@latchkey/protocol/hpke')
    const { p256 } = await import('@noble/curves/nist.js')
    const { bytesToHex, utf8ToBytes } = await import('@noble/hashes/utils.js')
    const target = p256.utils.randomSecretKey()
    const targetPublicKey = bytesToHex(p256.getPublicKey(target, false))
    const mnemonic = 'test test test test test test test test test test test junk'
    const bundle = (to: Uint8Array) =>
      JSON.stringify(hpkeSeal({ plaintext: utf8ToBytes(mnemonic), receiverPublicKey: to }))
    const importJob = (encryptedBundle: string): ImportWalletJob => ({
      kind: 'importWallet',
      sealedTargetKey: sealer.seal(target),
      targetPublicKey,
      encryptedBundle,
      accounts: [ETH],
    })
    const expected = deriveAccount(mnemonicToSeed(mnemonic), ETH).address
    const mine = importJob(bundle(hexToBytes(targetPublicKey)))
    const [inWorker, inline] = await Promise.all([workers.run(mine), inlineCrypto(sealer).run(mine)])
    for (const result of [inWorker, inline]) {
      if ('error' in result) throw new Error(result.error)
      expect(result.accounts.map((account) => account.address)).toEqual([expected])
      expect(sealer.open(result.accounts[0]!.sealedPrivateKey)).toEqual(
        deriveAccount(mnemonicToSeed(mnemonic), ETH).privateKey,
      )
      expect(new TextDecoder().decode(sealer.open(result.sealedMnemonic))).toBe(mnemonic)
    }
    const stranger = p256.getPublicKey(p256.utils.randomSecretKey(), false)
    expect(await workers.run(importJob(bundle(stranger)))).toEqual({
      error: expect.stringMatching(/cannot be decrypted/),
    })
  })

  it('sign exactly as in the request thread, many jobs at once over both workers', async () => {
    const jobs = Array.from({ length: 40 }, (_, i) => job([`0x${i.toString(16).padStart(64, '0')}`]))
    const [inWorkers, inline] = await Promise.all([
      Promise.all(jobs.map((j) => workers.run(j))),
      Promise.all(jobs.map((j) => inlineCrypto(sealer).run(j))),
    ])
    expect(inWorkers).toEqual(inline)
    expect(inWorkers.every((result) => 'signatures' in result)).toBe(true)
  })

  it('name the first payload they cannot sign, as plain data', async () => {
    const result = await workers.run(job(['0x01', 'not hex']))
    expect(result).toMatchObject({ error: { index: 1 } })
  })

  it('make a new wallet whose sealed mnemonic derives the sealed account key they return', async () => {
    const result = await workers.run({ kind: 'newWallet', mnemonicLength: 12, accounts: [ETH] })
    if ('error' in result) throw new Error(result.error)
    const mnemonic = new TextDecoder().decode(sealer.open(result.sealedMnemonic))
    expect(mnemonic.split(' ')).toHaveLength(12)
    const derived = deriveAccount(mnemonicToSeed(mnemonic), ETH)
    expect(result.accounts[0]).toMatchObject({ address: derived.address, publicKey: derived.publicKey })
    expect(sealer.open(result.accounts[0]!.sealedPrivateKey)).toEqual(derived.privateKey)
    // The signature made in a worker with the sealed key verifies against the account's key.
    const signed = await workers.run({
      ...job(['0x'.padEnd(66, 'ab')]),
      sealedKey: result.accounts[0]!.sealedPrivateKey,
    })
    if (!('signatures' in signed)) throw new Error('not signed')
    expect(
      verifyRawSignature({
        curve: 'CURVE_SECP256K1',
        publicKey: hexToBytes(derived.publicKey),
        payload: '0x'.padEnd(66, 'ab'),
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_KECCAK256',
        signature: signed.signatures[0]!,
      }),
    ).toBe(true)
  })

  it('refuse a key sealed under another master key (the job fails, nothing is signed)', async () => {
    const foreign = createSealer(new Uint8Array(32).fill(9)).seal(secret)
    await expect(workers.run({ ...job(['0x01']), sealedKey: foreign })).rejects.toThrow(/crypto worker/)
  })

  it('take no more jobs once closed', async () => {
    const closing = cryptoWorkers({ threads: 1 })(masterKey.slice())
    expect('signatures' in (await closing.run(job(['0x01'])))).toBe(true)
    await closing.close?.()
    await expect(closing.run(job(['0x01']))).rejects.toThrow(/closed/)
  })
})

describe('crypto workers that cannot start', () => {
  it('are not alive (so /readyz is not ready), refuse to be ready, and each failure is logged through the service logger', async () => {
    const lines: { fields: { where?: string; err?: { message?: string } }; message?: string }[] = []
    const capture = {
      debug: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: (fields: object, message?: string) => lines.push({ fields, message }),
    }
    const previous = setUnexpectedErrorLogger(capture)
    // A key of the wrong length: every worker throws while it loads.
    const broken = cryptoWorkers({ threads: 1 })(new Uint8Array(5))
    try {
      await expect(broken.ready!()).rejects.toThrow('crypto workers cannot start')
      expect(broken.alive!()).toBe(false)
      await expect(broken.run(job(['0x'.padEnd(66, 'ab')]))).rejects.toThrow()
      expect(lines.length).toBeGreaterThanOrEqual(3)
      expect(lines[0]).toMatchObject({ fields: { where: 'crypto-worker' }, message: 'unexpected error' })
    } finally {
      setUnexpectedErrorLogger(previous)
      await broken.close?.()
    }
    // Healthy workers are ready and alive.
    await workers.ready!()
    expect(workers.alive!()).toBe(true)
  })
})
