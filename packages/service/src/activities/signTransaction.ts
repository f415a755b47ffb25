import { TRANSACTION_TYPES } from '@latchkey/protocol'
import { findSigner, withAccountKey } from '../domain/wallets.ts'
import { FieldError } from '../kernel/base/errors.ts'
import { CryptoInputError } from '../kernel/crypto/errors.ts'
import type { SignTransactionResult } from '../kernel/crypto/jobs.ts'
import { signTransaction as signWithKey } from '../kernel/crypto/signTransaction.ts'
import { defineActivity } from '../kernel/registry.ts'
import { describeTransaction, reserveSpend, spendContextOf } from '../kernel/spending.ts'
import { signerLookups } from './signRawPayloads.ts'

/** What `precompute` hands `run`: the account it signed with, and what the job answered. */
interface EarlySignature {
  accountId: string
  sealedKey: string
  result: SignTransactionResult
}

/** Largest unsignedTransaction accepted, in hex characters (a 128 kB transaction). */
const MAX_TRANSACTION_HEX = 262_144

/** The curve each transaction type is signed with. */
const CURVE_OF = {
  TRANSACTION_TYPE_ETHEREUM: 'CURVE_SECP256K1',
  TRANSACTION_TYPE_SOLANA: 'CURVE_ED25519',
} as const

/**
 * Signs an unsigned Ethereum (legacy EIP-155, EIP-2930, EIP-1559, EIP-7702) or Solana (legacy, v0)
 * transaction with the `signWith` account, which becomes its sender / fills its signer slot.
 */
export const signTransaction = defineActivity('sign_transaction', {
  parse: (r) => ({
    signWith: r.string('signWith', { max: 200 }),
    type: r.enum('type', TRANSACTION_TYPES),
    unsignedTransaction: r.string('unsignedTransaction', { max: MAX_TRANSACTION_HEX }),
  }),
  lookups: signerLookups,
  // Signed in a crypto worker while the activity waits for its transaction (under a spending
  // limit, for its organization's lock): used only if the transaction finds the same account.
  precompute: async (ctx, p) => {
    const account = await findSigner(ctx.reads, ctx.organization.id, p.signWith, 'parameters.signWith')
    if (account.curve !== CURVE_OF[p.type]) return undefined
    const result = await ctx.runtime.crypto
      .run({
        kind: 'signTransaction',
        sealedKey: account.sealedPrivateKey,
        type: p.type,
        unsignedTransaction: p.unsignedTransaction,
      })
      .catch(() => undefined)
    return result && { accountId: account.id, sealedKey: account.sealedPrivateKey, result }
  },
  run: async (ctx, p) => {
    const account = await findSigner(ctx.tx, ctx.organization.id, p.signWith, 'parameters.signWith')
    if (account.curve !== CURVE_OF[p.type])
      throw new FieldError({
        field: 'parameters.signWith',
        message: `${p.signWith} is a ${account.curve} account; ${p.type} needs a ${CURVE_OF[p.type]} account`,
      })
    // Under a spending limit, what it spends is reserved in this transaction, or it is refused.
    await reserveSpend(spendContextOf(ctx), {
      signer: account.address,
      describe: () => describeTransaction(p.type, p.unsignedTransaction),
      reference: ctx.activityId,
    })
    const early = ctx.precomputed as EarlySignature | undefined
    if (early && early.accountId === account.id && early.sealedKey === account.sealedPrivateKey) {
      if ('signedTransaction' in early.result) return { signedTransaction: early.result.signedTransaction }
      throw new FieldError({
        field: `parameters.${early.result.error.field ?? 'unsignedTransaction'}`,
        message: early.result.error.message,
      })
    }
    const signedTransaction = withAccountKey(ctx.runtime, account, (privateKey) => {
      try {
        return signWithKey({ type: p.type, unsignedTransaction: p.unsignedTransaction, privateKey })
      } catch (error) {
        if (error instanceof CryptoInputError)
          throw new FieldError({
            field: `parameters.${error.field ?? 'unsignedTransaction'}`,
            message: error.message,
          })
        throw error
      }
    })
    return { signedTransaction }
  },
})
