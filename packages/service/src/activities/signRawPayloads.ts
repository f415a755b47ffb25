import {
  HASH_FUNCTIONS,
  type HashFunction,
  PAYLOAD_ENCODINGS,
  type PayloadEncoding,
} from '@latchkey/protocol'
import { findSigner } from '../domain/wallets.ts'
import { FieldError } from '../kernel/base/errors.ts'
import type { RawSignature, SignPayloadsJob, SignPayloadsResult } from '../kernel/crypto/index.ts'
import { stringItem } from '../kernel/Reader.ts'
import type { ActivityContext, PrepareContext } from '../kernel/registry.ts'
import { defineActivity } from '../kernel/registry.ts'
import { reserveSpend, spendContextOf, spendLookups } from '../kernel/spending.ts'
import type { WalletAccountRow } from '../kernel/store/model.ts'
import type { Lookup } from '../kernel/store/Store.ts'

/** Largest number of payloads per request. */
export const MAX_PAYLOADS = 100

/** Signs payloads with a wallet account's key (`signWith` = its address). */
export const signRawPayloads = defineActivity('sign_raw_payloads', {
  parse: (r) => ({
    signWith: r.string('signWith', { max: 200 }),
    payloads: r.array('payloads', stringItem, { min: 1, max: MAX_PAYLOADS }),
    encoding: r.enum('encoding', PAYLOAD_ENCODINGS),
    hashFunction: r.enum('hashFunction', HASH_FUNCTIONS),
  }),
  lookups: signerLookups,
  precompute: (ctx, p) => startSigning(ctx, p.signWith, { ...p }),
  run: async (ctx, p) => {
    const signatures = await signAs(ctx, p.signWith, { ...p }, (index) => ({
      field: `parameters.payloads[${index}]`,
      prefix: `payload ${index}: `,
    }))
    return { signatures }
  },
})

interface Payloads {
  payloads: string[]
  encoding: PayloadEncoding
  hashFunction: HashFunction
}

/** What `precompute` hands `run`: the account row read, and its signatures on the way. */
interface EarlySignatures {
  accountId: string
  sealedKey: string
  /** Undefined when the job failed (it is run again, to fail the same way in the activity). */
  result: SignPayloadsResult | undefined
}

const signingJob = (account: WalletAccountRow, p: Payloads): SignPayloadsJob => ({
  kind: 'signPayloads',
  sealedKey: account.sealedPrivateKey,
  curve: account.curve,
  payloads: p.payloads,
  encoding: p.encoding,
  hashFunction: p.hashFunction,
})

/**
 * The signing activities' `lookups`: the wallet accounts `signWith` names by its address as sent
 * (what `findSigner` reads first), read with the request's credential and organization.
 */
export function signerLookups(organizationId: string, parameters: unknown): Lookup[] {
  const signWith = (parameters as { signWith?: unknown } | null)?.signWith
  return [
    ...(typeof signWith === 'string' && signWith.length <= 200
      ? [{ table: 'walletAccounts' as const, field: 'address', value: signWith }]
      : []),
    // The organization's spending limits: with none, the snapshot run needs nothing more.
    ...spendLookups(organizationId),
  ]
}

/**
 * The signing activities' `precompute`: finds the signer in committed data and starts signing
 * through `service.crypto` (a worker thread in the CLI) while the activity waits for its
 * transaction.
 */
export async function startSigning(
  ctx: PrepareContext,
  signWith: string,
  p: Payloads,
): Promise<EarlySignatures> {
  const account = await findSigner(ctx.reads, ctx.organization.id, signWith, 'parameters.signWith')
  return {
    accountId: account.id,
    sealedKey: account.sealedPrivateKey,
    result: await ctx.runtime.crypto.run(signingJob(account, p)).catch(() => undefined),
  }
}

/**
 * Signs `p.payloads` as the transaction's signer for `signWith`: with the precomputed signatures
 * when they were made with that same account and key, else now. A payload the curve or encoding
 * rejects fails the activity naming it (`at(index)`); a bad setting names its parameter.
 */
export async function signAs(
  ctx: ActivityContext,
  signWith: string,
  p: Payloads,
  at: (index: number) => { field: string; prefix: string },
): Promise<RawSignature[]> {
  const account = await findSigner(ctx.tx, ctx.organization.id, signWith, 'parameters.signWith')
  // A raw payload cannot be read as a transaction: refused while a spending limit covers the signer.
  await reserveSpend(spendContextOf(ctx), {
    signer: account.address,
    key: { curve: account.curve, publicKey: account.publicKey },
    describe: () => ({ kind: 'opaque', what: `a raw payload (${p.encoding}, ${p.hashFunction})` }),
  })
  const early = ctx.precomputed as EarlySignatures | undefined
  const result =
    (early && early.accountId === account.id && early.sealedKey === account.sealedPrivateKey
      ? early.result
      : undefined) ?? (await ctx.runtime.crypto.run(signingJob(account, p)))
  if ('signatures' in result) return result.signatures
  const { message, field, index } = result.error
  const { field: payloadField, prefix } = at(index)
  throw new FieldError({
    field:
      field === 'payloads' || field === 'payload' || field === undefined
        ? payloadField
        : `parameters.${field === 'curve' ? 'signWith' : field}`,
    message: `${prefix}${message}`,
  })
}
