import { TRANSACTION_TYPES, type TransactionType } from '@latchkey/protocol'
import { findSigner } from '../domain/wallets.ts'
import { FieldError } from '../kernel/base/errors.ts'
import type { SignTransactionJob, SignTransactionResult } from '../kernel/crypto/jobs.ts'
import { defineActivity } from '../kernel/registry.ts'
import { describeTransaction, reserveSpend, spendContextOf } from '../kernel/spending.ts'
import type { WalletAccountRow } from '../kernel/store/model.ts'
import { signerLookups } from './signRawPayloads.ts'

/** What `precompute` hands `run`: the account it signed with, and what the job answered. */
interface EarlySignature {
  accountId: string
  sealedKey: string
  result: SignTransactionResult
}

/** The crypto job that signs `p.unsignedTransaction` with `account`'s sealed key. */
const signingJob = (
  account: WalletAccountRow,
  p: { type: TransactionType; unsignedTransaction: string },
): SignTransactionJob => ({
  kind: 'signTransaction',
  sealedKey: account.sealedPrivateKey,
  type: p.type,
  unsignedTransaction: p.unsignedTransaction,
})

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
    const result = await ctx.runtime.crypto.run(signingJob(account, p)).catch(() => undefined)
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
    // The worker's signature when it was made with this same account and key, else one made now
    // (the same job, in whichever thread the runner runs it).
    const early = ctx.precomputed as EarlySignature | undefined
    const result =
      early && early.accountId === account.id && early.sealedKey === account.sealedPrivateKey
        ? early.result
        : await ctx.runtime.crypto.run(signingJob(account, p))
    if ('error' in result)
      throw new FieldError({
        field: `parameters.${result.error.field ?? 'unsignedTransaction'}`,
        message: result.error.message,
      })
    return { signedTransaction: result.signedTransaction }
  },
})
