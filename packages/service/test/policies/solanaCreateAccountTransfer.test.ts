// `solana.tx.transfers` lists CreateAccount too (solanaSystemTransfers.test.ts has the other
// layouts): it once listed System Transfer only, and CreateAccount moves `lamports` from the funding
// signer to a new account just as well, so a DENY on the amount of SOL leaving the wallet let 5 SOL
// land in an account the attacker held the key of.
import {
  type Address,
  createNoopSigner,
  generateKeyPairSigner,
  getTransactionDecoder,
  getTransactionEncoder,
  type Instruction,
  partiallySignTransaction,
} from '@solana/kit'
import {
  getCreateAccountInstruction,
  getTransferSolInstruction,
  SYSTEM_PROGRAM_ADDRESS,
} from '@solana-program/system'
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

const LIMIT = 100_000_000n // 0.1 SOL

describe('a DENY on solana.tx.transfers amounts', () => {
  it('denies moving more than the limit out of the wallet with System CreateAccount', async () => {
    const t = await delegated([SOLANA_ACCOUNT])
    const user = t.sub.addresses![0]!
    node.airdrop(user, 10n ** 10n)
    await t.allowSigning()
    await t.policy({
      policyName: 'no SOL transfer over 0.1 SOL',
      effect: 'EFFECT_DENY',
      condition: `activity.type == 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2' && solana.tx.transfers.any(t, t.amount > ${LIMIT})`,
    })
    const sign = (ix: Instruction) =>
      t.h.submit(
        'sign_transaction',
        { signWith: user, type: 'TRANSACTION_TYPE_SOLANA', unsignedTransaction: unsigned(user, [ix]) },
        t.asBackend,
      )
    const thief = await generateKeyPairSigner()
    // Control: a 5 SOL Transfer is refused by the DENY.
    const plain = await sign(
      getTransferSolInstruction({
        source: createNoopSigner(user as Address),
        destination: thief.address,
        amount: 5n * 10n ** 9n,
      }),
    )
    expect(plain.body.details?.outcome).toBe('OUTCOME_DENY_EXPLICIT')

    // Attack: the same 5 SOL as CreateAccount's lamports, into an account whose key the thief holds.
    t.h.clock.advance(1)
    const create = getCreateAccountInstruction({
      payer: createNoopSigner(user as Address),
      newAccount: thief,
      lamports: 5n * 10n ** 9n,
      space: 0,
      programAddress: SYSTEM_PROGRAM_ADDRESS,
    })
    const reply = await sign(create)
    let broadcastResult: unknown
    if (reply.status === 200) {
      const signedHex = reply.body.activity.result.signTransactionResult.signedTransaction as string
      const tx = getTransactionDecoder().decode(Buffer.from(signedHex, 'hex'))
      const both = await partiallySignTransaction([thief.keyPair], tx)
      broadcastResult = await broadcast(Buffer.from(getTransactionEncoder().encode(both)).toString('hex'))
    }
    expect(
      {
        status: reply.status,
        outcome: reply.body.details?.outcome,
        lamportsTakenByThief: node.balance(thief.address),
      },
      JSON.stringify(broadcastResult),
    ).toEqual({
      status: 403,
      outcome: 'OUTCOME_DENY_EXPLICIT',
      lamportsTakenByThief: 0n,
    })
    await t.h.service.close()
  })
})
