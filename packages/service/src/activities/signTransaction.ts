import { TRANSACTION_TYPES, type TransactionType } from '@latchkey/protocol'
import { findSigner } from '../domain/wallets.ts'
import { FieldError } from '../kernel/base/errors.ts'
import type { SignTransactionJob, SignTransactionResult } from '../kernel/crypto/jobs.ts'
import { defineActivity } from '../kernel/registry.ts'
import {
  describeDecoded,
  describeTransaction,
  hasSpendingLimits,
  l1FeesOf,
  pricedChains,
  reserveSpend,
  spendContextOf,
  withL1Fees,
} from '../kernel/spending.ts'
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
  describe = false,
): SignTransactionJob => ({
  kind: 'signTransaction',
  sealedKey: account.sealedPrivateKey,
  type: p.type,
  unsignedTransaction: p.unsignedTransaction,
  ...(describe ? { describe } : {}),
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
  // Where the organization has limits, the worker also decodes what the transaction spends.
  precompute: async (ctx, p) => {
    const account = await findSigner(ctx.reads, ctx.organization.id, p.signWith, 'parameters.signWith')
    if (account.curve !== CURVE_OF[p.type]) return undefined
    const describe = await hasSpendingLimits(ctx.reads, ctx.organization.id)
    const result = await ctx.runtime.crypto.run(signingJob(account, p, describe)).catch(() => undefined)
    return result && { accountId: account.id, sealedKey: account.sealedPrivateKey, result }
  },
  // On an OP Stack or Scroll chain its sender pays an L1 data fee too (and an operator fee on an
  // OP Stack chain), which a native limit of that chain counts: priced by the chain's node,
  // outside the transaction (only where such a limit exists).
  prepares: async (ctx, p) =>
    p.type === 'TRANSACTION_TYPE_ETHEREUM' &&
    (await pricedChains(ctx.runtime, ctx.reads, ctx.organization.id)).size > 0,
  prepare: async (ctx, p) =>
    p.type === 'TRANSACTION_TYPE_ETHEREUM'
      ? l1FeesOf(ctx.runtime, ctx.reads, ctx.organization.id, p.unsignedTransaction)
      : undefined,
  run: async (ctx, p) => {
    const account = await findSigner(ctx.tx, ctx.organization.id, p.signWith, 'parameters.signWith')
    if (account.curve !== CURVE_OF[p.type])
      throw new FieldError({
        field: 'parameters.signWith',
        message: `${p.signWith} is a ${account.curve} account; ${p.type} needs a ${CURVE_OF[p.type]} account`,
      })
    const early = ctx.precomputed as EarlySignature | undefined
    // Under a spending limit, what it spends is reserved in this transaction, or it is refused
    // (decoded by the worker that signed ahead when it did: the same bytes, whichever account).
    const decoded = early && 'policy' in early.result ? early.result.policy : undefined
    await reserveSpend(spendContextOf(ctx), {
      signer: account.address,
      key: { curve: account.curve, publicKey: account.publicKey },
      describe: () =>
        withL1Fees(
          decoded ? describeDecoded(decoded) : describeTransaction(p.type, p.unsignedTransaction),
          ctx.prepared as Record<string, bigint> | undefined,
        ),
    })
    // The worker's signature when it was made with this same account and key, else one made now
    // (the same job, in whichever thread the runner runs it).
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
