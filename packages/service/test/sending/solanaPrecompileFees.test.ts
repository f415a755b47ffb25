// A sponsored Solana transaction's precompile signatures (Ed25519SigVerify here) are paid by the
// sponsor as fee payer, 5,000 lamports each, as its own signatures are. The caps once counted only
// the transaction's own (the service's bound, `solanaFeeBound`, and the dev node's
// getFeeForMessage): 50 verifications of one signature, 14 bytes each, cost the sponsor 260,000
// lamports against 10,000 counted. Both now count them; the bound is checked alone below, as the
// backstop for a node that leaves them out.
import { ed25519 } from '@noble/curves/ed25519.js'
import type { Address, Instruction } from '@solana/kit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  airdrop,
  LAMPORTS_PER_SIGNATURE,
  type SolanaNode,
  startSolanaNode,
} from '../../src/dev/startSolanaNode.ts'
import { readComputeBudget, solanaFeeBound } from '../../src/kernel/crypto/solanaFees.ts'
import { sponsorAddress } from '../../src/sending/sponsors.ts'
import {
  createHarness,
  fakeClock,
  type Harness,
  resultOf,
  SOLANA_ACCOUNT,
} from '../../src/testing/harness.ts'
import { waitForSend } from '../sending/sendSupport.ts'
import { solanaTransaction } from '../support/solanaTransaction.ts'

let node: SolanaNode

beforeAll(async () => {
  node = await startSolanaNode()
})

afterAll(async () => {
  await node?.close()
})

/**
 * An Ed25519SigVerify instruction asking the runtime to verify `count` signatures: every offset
 * points at the same valid (signature, public key, message) triple inside the instruction, so it
 * costs 14 bytes a signature and passes verification.
 */
function ed25519Verifications(count: number): Instruction {
  const secret = ed25519.utils.randomSecretKey()
  const publicKey = ed25519.getPublicKey(secret)
  const message = new Uint8Array([1, 2, 3])
  const signature = ed25519.sign(message, secret)
  const header = 2 + 14 * count
  const data = new Uint8Array(header + 64 + 32 + message.length)
  const view = new DataView(data.buffer)
  data[0] = count
  const signatureAt = header
  const publicKeyAt = header + 64
  const messageAt = header + 96
  for (let i = 0; i < count; i++) {
    const at = 2 + 14 * i
    view.setUint16(at, signatureAt, true)
    view.setUint16(at + 2, 0xffff, true)
    view.setUint16(at + 4, publicKeyAt, true)
    view.setUint16(at + 6, 0xffff, true)
    view.setUint16(at + 8, messageAt, true)
    view.setUint16(at + 10, message.length, true)
    view.setUint16(at + 12, 0xffff, true)
  }
  data.set(signature, signatureAt)
  data.set(publicKey, publicKeyAt)
  data.set(message, messageAt)
  return { programAddress: 'Ed25519SigVerify111111111111111111111111111' as Address, data }
}

/** An unsigned transaction on the node's latest blockhash. */
const unsigned = (feePayer: string, instructions: Instruction[]) =>
  solanaTransaction(feePayer, instructions, node.svm.latestBlockhash())

describe('sponsored Solana fees and the lamport caps', () => {
  it('a sponsored transaction carrying precompile signature verifications never costs the sponsor more than the per-transaction lamport cap', async () => {
    // Two signatures (the sponsor's and the user's) fit: 10,000 lamports a send.
    const perTransactionLamports = 2n * LAMPORTS_PER_SIGNATURE
    const h: Harness = await createHarness({
      clock: fakeClock(Date.now()),
      rpc: { [node.caip2]: node.url },
      sending: { pollIntervalMs: 20 },
      sponsorship: {
        delegates: {},
        caps: {
          perTransactionLamports: Number(perTransactionLamports),
          perUserPerDayLamports: Number(perTransactionLamports),
          perOrganizationPerMonthLamports: Number(perTransactionLamports),
        },
      },
    })
    const sponsor = sponsorAddress(h.service.runtime, 'default', 'solana')!
    airdrop(node, sponsor, 10n ** 9n)
    const { addresses } = resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'W', accounts: [SOLANA_ACCOUNT] }),
    )
    const user = addresses[0] as string
    const before = node.balance(sponsor)
    h.clock.set(Date.now())
    const reply = await h.submit('sol_send_transaction', {
      caip2: node.caip2,
      unsignedTransaction: unsigned(user, [ed25519Verifications(50)]),
      signWiths: [user],
      sponsor: true,
    } as never)
    if (reply.status === 200) {
      const { sendTransactionStatusId } = resultOf('sol_send_transaction', reply)
      const status = await waitForSend(h, sendTransactionStatusId)
      const paid = before - node.balance(sponsor)
      const counted = (await h.service.store.all('gasUsage')).reduce((sum, row) => sum + BigInt(row.gas), 0n)
      // The secure behaviour: what the sponsor paid is what the caps counted, within the cap.
      expect(
        { paid, counted, txStatus: status.txStatus },
        `sponsor paid ${paid} lamports for one send; the caps counted ${counted}, per-transaction cap ${perTransactionLamports}`,
      ).toEqual({ paid: counted, counted, txStatus: status.txStatus })
      expect(paid).toBeLessThanOrEqual(perTransactionLamports)
    } else {
      // Refused before signing: fine, as long as nothing was paid.
      expect(reply.status).toBe(429)
      expect(before - node.balance(sponsor)).toBe(0n)
    }
    await h.service.close()
  })

  it("the service's bound counts the signatures each precompile instruction verifies", () => {
    const toHex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')
    const verify = ed25519Verifications(50)
    const instructions = [
      { program_key: verify.programAddress, data: toHex(verify.data as Uint8Array) },
      { program_key: 'KeccakSecp256k11111111111111111111111111111', data: '03' },
      { program_key: 'Secp256r1SigVerify1111111111111111111111111', data: '0200' },
      { program_key: '11111111111111111111111111111111', data: '02000000e803000000000000' },
    ]
    const budget = readComputeBudget(instructions)
    if ('unreadable' in budget) throw new Error('unreadable')
    expect(solanaFeeBound(2, budget, instructions)).toBe((2n + 50n + 3n + 2n) * LAMPORTS_PER_SIGNATURE)
    expect(solanaFeeBound(2, budget, instructions.slice(3))).toBe(2n * LAMPORTS_PER_SIGNATURE)
  })
})
