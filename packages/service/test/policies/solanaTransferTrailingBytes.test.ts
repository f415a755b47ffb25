// A System Program transfer with bytes after its 12 is still a transfer to the policies
// (`solana.tx.transfers`): the program ignores trailing bytes and moves the lamports, and the policy
// reader once listed only transfers of exactly 12 bytes, so a DENY on the recipient let it through.
import { type Address, createNoopSigner, generateKeyPairSigner, type Instruction } from '@solana/kit'
import { getTransferSolInstruction } from '@solana-program/system'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type SolanaNode, startSolanaNode } from '../../src/dev/startSolanaNode.ts'
import { SOLANA_ACCOUNT } from '../../src/testing/harness.ts'
import { broadcastSolana, solanaTransaction } from '../support/solanaTransaction.ts'
import { delegated } from './delegated.ts'

let node: SolanaNode
beforeAll(async () => {
  node = await startSolanaNode()
})
afterAll(async () => {
  await node?.close()
})

/** An unsigned transaction on the node's latest blockhash. */
const unsigned = (feePayer: string, instructions: Instruction[]) =>
  solanaTransaction(feePayer, instructions, node.svm.latestBlockhash())

const broadcast = (signedHex: string) => broadcastSolana(node.url, signedHex)

describe('a System Program transfer with trailing data bytes', () => {
  it('is still a transfer to the policies: a DENY on its recipient refuses it', async () => {
    const t = await delegated([SOLANA_ACCOUNT])
    const user = t.sub.addresses![0]!
    node.airdrop(user, 10n ** 9n)
    const { address: blocked } = await generateKeyPairSigner()
    await t.allowSigning()
    await t.policy({
      policyName: 'never pay blocked',
      effect: 'EFFECT_DENY',
      condition: `activity.type == 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2' && solana.tx.transfers.any(t, t.to == '${blocked}')`,
    })
    const transfer = getTransferSolInstruction({
      source: createNoopSigner(user as Address),
      destination: blocked,
      amount: 10n ** 8n,
    })
    const sign = (ix: Instruction) =>
      t.h.submit(
        'sign_transaction',
        { signWith: user, type: 'TRANSACTION_TYPE_SOLANA', unsignedTransaction: unsigned(user, [ix]) },
        t.asBackend,
      )
    // Control: the ordinary 12-byte transfer is refused by the DENY.
    const plain = await sign(transfer)
    expect(plain.body.details?.outcome).toBe('OUTCOME_DENY_EXPLICIT')

    // Attack: the same transfer with one trailing zero byte in its data.
    t.h.clock.advance(1)
    const padded = { ...transfer, data: new Uint8Array([...(transfer.data as Uint8Array), 0]) }
    const reply = await sign(padded as Instruction)
    let broadcastResult: unknown
    if (reply.status === 200)
      broadcastResult = await broadcast(reply.body.activity.result.signTransactionResult.signedTransaction)
    expect({
      status: reply.status,
      lamportsReceivedByBlocked: node.balance(blocked),
      broadcastError: (broadcastResult as { error?: unknown } | undefined)?.error,
    }).toEqual({ status: 403, lamportsReceivedByBlocked: 0n, broadcastError: undefined })
    await t.h.service.close()
  })
})
