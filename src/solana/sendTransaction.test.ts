import {
  type Address,
  appendTransactionMessageInstruction,
  compileTransaction,
  createNoopSigner,
  createTransactionMessage,
  generateKeyPairSigner,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
} from '@solana/kit'
import { getTransferSolInstruction } from '@solana-program/system'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  airdrop,
  LAMPORTS_PER_SIGNATURE,
  type SolanaNode,
  startSolanaNode,
} from '../../packages/service/src/dev/startSolanaNode.ts'
import { sponsorAddress } from '../../packages/service/src/sending/sponsors.ts'
import { createWallet } from '../core/actions/activities/createWallet.ts'
import { sendTransaction } from '../core/actions/activities/sendTransaction.ts'
import { getCallsStatus } from '../core/actions/queries/getCallsStatus.ts'
import { createClientFixture } from '../core/test/fixtures.ts'

let node: SolanaNode

beforeAll(async () => {
  node = await startSolanaNode()
})

afterAll(async () => {
  await node?.close()
})

describe("latchkey/core's sendTransaction on Solana, against the local service and LiteSVM", () => {
  it('sends a transaction the user pays, and a sponsored one from an account holding no SOL', async () => {
    const fx = await createClientFixture(
      { polling: { intervalMs: 20, timeoutMs: 10_000 } },
      { rpc: { [node.caip2]: node.url }, sending: { pollIntervalMs: 20 }, sponsorship: { delegates: {} } },
    )
    await fx.signUpDirect()
    const sponsor = sponsorAddress(fx.harness.service.runtime, 'default', 'solana')!
    airdrop(node, sponsor, 10n ** 9n)
    const { addresses } = await createWallet(fx.client, { walletName: 'Sol', chains: ['solana'] })
    const user = addresses[0] as Address
    const transfer = async (amount: bigint) => {
      const { address: to } = await generateKeyPairSigner()
      const message = pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayer(user, m),
        (m) =>
          setTransactionMessageLifetimeUsingBlockhash(
            { blockhash: node.svm.latestBlockhash(), lastValidBlockHeight: 1_000n },
            m,
          ),
        (m) =>
          appendTransactionMessageInstruction(
            getTransferSolInstruction({ source: createNoopSigner(user), destination: to, amount }),
            m,
          ),
      )
      const unsignedTransaction = Buffer.from(
        getTransactionEncoder().encode(compileTransaction(message)),
      ).toString('hex')
      return { to, unsignedTransaction }
    }

    // Paid by the user.
    airdrop(node, user, 10n ** 8n)
    const paid = await transfer(10n ** 7n)
    const sent = await sendTransaction(fx.client, {
      unsignedTransaction: paid.unsignedTransaction,
      signWith: user,
      caip2: node.caip2,
    })
    const status = await getCallsStatus(fx.client, {
      sendTransactionStatusId: sent.sendTransactionStatusId,
      wait: true,
    })
    expect(status).toMatchObject({
      status: 'success',
      txStatus: 'INCLUDED',
      solana: { signature: expect.any(String) },
    })
    expect(node.balance(paid.to)).toBe(10n ** 7n)
    expect(node.balance(user)).toBe(10n ** 8n - 10n ** 7n - LAMPORTS_PER_SIGNATURE)

    // Sponsored: the user's remaining SOL all moves out; the sponsor pays the fee.
    const rest = node.balance(user)
    const sponsored = await transfer(rest)
    const before = node.balance(sponsor)
    const { sendTransactionStatusId } = await sendTransaction(fx.client, {
      unsignedTransaction: sponsored.unsignedTransaction,
      signWiths: [user],
      caip2: node.caip2,
      sponsor: true,
    })
    expect(await getCallsStatus(fx.client, { sendTransactionStatusId, wait: true })).toMatchObject({
      status: 'success',
    })
    expect(node.balance(user)).toBe(0n)
    expect(node.balance(sponsored.to)).toBe(rest)
    expect(before - node.balance(sponsor)).toBe(2n * LAMPORTS_PER_SIGNATURE)
    await fx.harness.service.close()
  })
})
