// Every System Program instruction that moves lamports from one account to another is a transfer
// to the policies (`solana.tx.transfers`): CreateAccount and CreateAccountWithSeed fund the new
// account (whose key the payee may hold), TransferWithSeed pays from a derived account, and
// WithdrawNonceAccount pays out of a nonce account. The reader once listed Transfer only, so a
// DENY on the amount or the recipient let 5 SOL out through CreateAccount
// (`solanaCreateAccountTransfer.test.ts`).
import { type Address, createNoopSigner, generateKeyPairSigner } from '@solana/kit'
import {
  getCreateAccountInstruction,
  getCreateAccountWithSeedInstruction,
  getTransferSolWithSeedInstruction,
  getWithdrawNonceAccountInstruction,
} from '@solana-program/system'
import { describe, expect, it } from 'vitest'
import { decodeTransactionForPolicy } from '../../src/kernel/crypto/signTransaction.ts'
import { solanaTransaction } from '../support/solanaTransaction.ts'

describe('solana.tx.transfers', () => {
  it('lists what CreateAccount, CreateAccountWithSeed, TransferWithSeed and WithdrawNonceAccount move', async () => {
    const [payer, created, seeded, derived, nonce, to] = await Promise.all(
      Array.from({ length: 6 }, () => generateKeyPairSigner()),
    )
    const owner = '11111111111111111111111111111111' as Address
    const signer = createNoopSigner(payer!.address)
    const hex = solanaTransaction(payer!.address, [
      getCreateAccountInstruction({
        payer: signer,
        newAccount: createNoopSigner(created!.address),
        lamports: 5n,
        space: 0n,
        programAddress: owner,
      }),
      getCreateAccountWithSeedInstruction({
        payer: signer,
        newAccount: seeded!.address,
        baseAccount: signer,
        base: payer!.address,
        seed: 'a seed of some length',
        amount: 7n,
        space: 0n,
        programAddress: owner,
      }),
      getTransferSolWithSeedInstruction({
        source: derived!.address,
        baseAccount: signer,
        destination: to!.address,
        amount: 9n,
        fromSeed: 'x',
        fromOwner: owner,
      }),
      getWithdrawNonceAccountInstruction({
        nonceAccount: nonce!.address,
        recipientAccount: to!.address,
        nonceAuthority: signer,
        withdrawAmount: 11n,
      }),
    ])
    const decoded = decodeTransactionForPolicy('TRANSACTION_TYPE_SOLANA', hex) as {
      solana: { tx: { transfers: unknown[] } }
    }
    expect(decoded.solana.tx.transfers).toEqual([
      { from: payer!.address, to: created!.address, amount: '5' },
      { from: payer!.address, to: seeded!.address, amount: '7' },
      { from: derived!.address, to: to!.address, amount: '9' },
      { from: nonce!.address, to: to!.address, amount: '11' },
    ])
  })
})
