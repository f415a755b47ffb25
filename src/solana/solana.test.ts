import {
  type Address,
  appendTransactionMessageInstruction,
  createSignableMessage,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase58Decoder,
  getPublicKeyFromAddress,
  getSignatureFromTransaction,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type TransactionSigner,
  verifySignature,
} from '@solana/kit'
import { getTransferSolInstruction } from '@solana-program/system'
import { FailedTransactionMetadata, LiteSVM } from 'litesvm'
import { beforeEach, describe, expect, it } from 'vitest'
import { createWallet } from '../core/actions/activities/createWallet.ts'
import { LatchkeyError } from '../core/errors.ts'
import { type ClientFixture, createClientFixture } from '../core/test/fixtures.ts'
import { createLatchkeySolanaSigner } from './index.ts'

const SOL = 1_000_000_000n

/** A system-program transfer of `amount` lamports, paid by `feePayer`, signed by kit's signers. */
async function signedTransfer(
  svm: LiteSVM,
  parameters: {
    feePayer: TransactionSigner
    source: TransactionSigner
    destination: Address
    amount: bigint
    version?: 0 | 'legacy'
  },
) {
  const message = pipe(
    createTransactionMessage({ version: parameters.version ?? 0 }),
    (m) => setTransactionMessageFeePayerSigner(parameters.feePayer, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: svm.latestBlockhash(), lastValidBlockHeight: 1_000n },
        m,
      ),
    (m) =>
      appendTransactionMessageInstruction(
        getTransferSolInstruction({
          source: parameters.source,
          destination: parameters.destination,
          amount: lamports(parameters.amount),
        }),
        m,
      ),
  )
  return signTransactionMessageWithSigners(message)
}

function execute(svm: LiteSVM, transaction: Parameters<LiteSVM['sendTransaction']>[0]) {
  const outcome = svm.sendTransaction(transaction)
  if (outcome instanceof FailedTransactionMetadata)
    throw new Error(`LiteSVM refused the transaction: ${outcome.err()} ${outcome.meta().logs().join('\n')}`)
  return outcome
}

describe('latchkey/solana against the local service and LiteSVM', () => {
  let fx: ClientFixture
  let address: Address
  let submitted: string[]
  beforeEach(async () => {
    fx = await createClientFixture()
    await fx.signUpDirect()
    const { addresses } = await createWallet(fx.client, { walletName: 'Sol', chains: ['solana'] })
    address = addresses[0] as Address
    submitted = []
    const fetch = fx.client.config.fetch
    fx.client.config.fetch = (input, init) => {
      const url = String(input)
      if (url.includes('/public/v1/submit/')) submitted.push(url.slice(url.lastIndexOf('/') + 1))
      return fetch(input, init)
    }
  })

  it('signs a system transfer that verifies with @solana/kit and that LiteSVM executes', async () => {
    const signer = createLatchkeySolanaSigner(fx.client, { address })
    const svm = new LiteSVM()
    svm.airdrop(address, lamports(2n * SOL))
    const recipient = (await generateKeyPairSigner()).address

    const transaction = await signedTransfer(svm, {
      feePayer: signer,
      source: signer,
      destination: recipient,
      amount: SOL / 10n,
    })

    const signature = transaction.signatures[address]
    expect(signature).toHaveLength(64)
    const publicKey = await getPublicKeyFromAddress(address)
    expect(await verifySignature(publicKey, signature as never, transaction.messageBytes)).toBe(true)
    // The transaction id is the fee payer's signature, base58.
    expect(getSignatureFromTransaction(transaction)).toBe(getBase58Decoder().decode(signature as never))

    execute(svm, transaction)
    expect(svm.getBalance(recipient)).toBe(SOL / 10n)
    expect(svm.getBalance(address)).toBe(2n * SOL - SOL / 10n - 5_000n)
    expect(submitted).toEqual(['sign_raw_payloads'])
  })

  it('signs a batch with one sign_raw_payloads, as a partial signer beside another fee payer', async () => {
    const signer = createLatchkeySolanaSigner(fx.client, { address })
    const feePayer = await generateKeyPairSigner()
    const svm = new LiteSVM()
    svm.airdrop(address, lamports(SOL))
    svm.airdrop(feePayer.address, lamports(SOL))
    const recipients = [(await generateKeyPairSigner()).address, (await generateKeyPairSigner()).address]
    const transactions = await Promise.all(
      recipients.map((destination, index) =>
        signedTransfer(svm, {
          feePayer,
          source: signer,
          destination,
          amount: 1_000_000n * BigInt(index + 1),
        }),
      ),
    )
    submitted.length = 0
    const dictionaries = await signer.signTransactions(transactions)
    expect(submitted).toEqual(['sign_raw_payloads'])
    expect(dictionaries.map((d) => Object.keys(d))).toEqual([[address], [address]])
    expect(dictionaries.map((d) => d[address])).toEqual(transactions.map((t) => t.signatures[address]))

    for (const transaction of transactions) execute(svm, transaction)
    expect(recipients.map((r) => svm.getBalance(r))).toEqual([1_000_000n, 2_000_000n])
    expect(svm.getBalance(address)).toBe(SOL - 3_000_000n)
    // Two signatures per transaction: the fee payer paid 2 × 5,000 lamports for each.
    expect(svm.getBalance(feePayer.address)).toBe(SOL - 20_000n)
  })

  it('signs whole transactions through sign_transaction (legacy and v0) that LiteSVM executes', async () => {
    const signer = createLatchkeySolanaSigner(fx.client, {
      address,
      signTransactionsWith: 'sign_transaction',
    })
    const feePayer = await generateKeyPairSigner()
    const svm = new LiteSVM()
    svm.airdrop(address, lamports(SOL))
    svm.airdrop(feePayer.address, lamports(SOL))
    const recipient = (await generateKeyPairSigner()).address
    const transactions = await Promise.all(
      ([0, 'legacy'] as const).map((version) =>
        signedTransfer(svm, {
          feePayer,
          source: signer,
          destination: recipient,
          amount: 1_000_000n,
          version,
        }),
      ),
    )
    expect(submitted).toEqual(['sign_transaction', 'sign_transaction'])
    const publicKey = await getPublicKeyFromAddress(address)
    for (const transaction of transactions) {
      const signature = transaction.signatures[address]
      expect(await verifySignature(publicKey, signature as never, transaction.messageBytes)).toBe(true)
      execute(svm, transaction)
    }
    expect(svm.getBalance(recipient)).toBe(2_000_000n)
  })

  it('signs messages in one request; each signature verifies', async () => {
    const signer = createLatchkeySolanaSigner(fx.client, { address })
    const messages = [
      createSignableMessage('gm from latchkey'),
      createSignableMessage(new Uint8Array([0, 1, 2])),
    ]
    const dictionaries = await signer.signMessages(messages)
    expect(submitted).toEqual(['sign_raw_payloads'])
    const publicKey = await getPublicKeyFromAddress(address)
    for (const [index, message] of messages.entries()) {
      const signature = dictionaries[index]?.[address]
      expect(signature).toHaveLength(64)
      expect(await verifySignature(publicKey, signature as never, message.content)).toBe(true)
    }
    expect(await signer.signMessages([])).toEqual([])
    expect(submitted).toHaveLength(1)
  })

  it('refuses an empty message with its own error, before asking the service', async () => {
    // @solana/kit's own key pair signer signs it; the service takes no empty payload, and its
    // "parameters.payloads[1] must be a non-empty string" named nothing the app had passed.
    const empty = createSignableMessage('')
    const own = await generateKeyPairSigner()
    const [ownSigned] = await own.signMessages([empty])
    expect(await verifySignature(own.keyPair.publicKey, ownSigned![own.address]!, empty.content)).toBe(true)
    const signer = createLatchkeySolanaSigner(fx.client, { address })
    const error = await signer.signMessages([createSignableMessage('gm'), empty]).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LatchkeyError)
    expect(error).toMatchObject({
      code: 'FIELD_INVALID',
      message: 'Message 1 is empty: the Latchkey service does not sign an empty message',
      details: { field: 'content', rule: 'MESSAGE_IS_EMPTY', index: 1 },
    })
    expect(submitted).toEqual([])
  })

  it('refuses a transaction it is not a signer of, before asking the service', async () => {
    const signer = createLatchkeySolanaSigner(fx.client, { address })
    const other = await generateKeyPairSigner()
    const svm = new LiteSVM()
    const transaction = await signedTransfer(svm, {
      feePayer: other,
      source: other,
      destination: address,
      amount: 1n,
    })
    const error = await signer.signTransactions([transaction]).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LatchkeyError)
    expect(error).toMatchObject({ code: 'FIELD_INVALID', details: { field: 'signatures', index: 0 } })
    expect(submitted).toEqual([])
  })

  it('surfaces the service refusing an account the user does not own', async () => {
    const stranger = (await generateKeyPairSigner()).address
    const signer = createLatchkeySolanaSigner(fx.client, { address: stranger })
    const error = await signer.signMessages([createSignableMessage('x')]).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LatchkeyError)
    expect((error as LatchkeyError).code).toMatch(/NOT_FOUND/)
  })

  it('rejects an address that is not base58 of 32 bytes', () => {
    expect(() => createLatchkeySolanaSigner(fx.client, { address: '0x1234' })).toThrow()
  })
})
