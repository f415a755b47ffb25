import { SOLANA_CAIP2_ALIASES, type SolSendTransactionParameters } from '@latchkey/protocol'
import { ed25519 } from '@noble/curves/ed25519.js'
import { hexToBytes } from '@noble/hashes/utils.js'
import { type Address, isAddress } from '@solana/addresses'
import type { SignatureBytes } from '@solana/keys'
import {
  type CompiledTransactionMessageWithLifetime,
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
  type LegacyCompiledTransactionMessage,
  type V0CompiledTransactionMessage,
} from '@solana/transaction-messages'
import {
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  getTransactionDecoder,
  type Transaction,
  type TransactionMessageBytes,
} from '@solana/transactions'
import { findSigner, withAccountKey } from '../domain/wallets.ts'
import { ConflictError, FieldError, NotConfiguredError } from '../kernel/base/errors.ts'
import { type ComputeBudget, readComputeBudget, solanaFeeBound } from '../kernel/crypto/solanaFees.ts'
import type { Reader } from '../kernel/Reader.ts'
import type { ActivityContext, PrepareContext } from '../kernel/registry.ts'
import { describeTransaction, reserveSpend, spendContextOf } from '../kernel/spending.ts'
import { recordSend } from './ethSend.ts'
import { checkGasCaps, computeUnitPriceCeilingOf } from './gasCaps.ts'
import { rpcFor } from './sendingState.ts'
import { nodeFailure, nodeText, type SendRpc } from './sendRpc.ts'
import { findSponsor } from './sponsors.ts'

/** Largest unsignedTransaction accepted, in hex characters (legacy and v0 transactions are ≤ 1232 bytes). */
const MAX_TRANSACTION_HEX = 2 * 1232 + 2

/** Most signers of one transaction (legacy and v0). */
const MAX_SIGNERS = 16

const HEX = /^(0x)?([0-9a-fA-F]{2})+$/
const SOLANA_CAIP2 = /^solana:[1-9A-HJ-NP-Za-km-z]{1,44}$/

type Message = (LegacyCompiledTransactionMessage | V0CompiledTransactionMessage) &
  CompiledTransactionMessageWithLifetime

/** `sol_send_transaction`'s parameters, V2 (`signWiths`) or V1 (one `signWith`), as V2. */
export interface SolSend extends Required<Omit<SolSendTransactionParameters, 'recentBlockhash'>> {
  recentBlockhash?: string
}

export function parseSolSend(r: Reader): SolSend {
  const unsignedTransaction = r.string('unsignedTransaction', {
    max: MAX_TRANSACTION_HEX,
    pattern: HEX,
    hint: 'hex of a Solana wire transaction',
  })
  const signWiths = r.has('signWiths')
    ? r.ids('signWiths', { min: 1, max: MAX_SIGNERS })
    : [r.string('signWith', { max: 200 })]
  const caip2 = r.string('caip2', {
    max: 60,
    pattern: SOLANA_CAIP2,
    hint: 'a Solana CAIP-2 chain id like solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
  })
  const recentBlockhash = r.optString('recentBlockhash', { max: 44 })
  if (recentBlockhash !== undefined && !isAddress(recentBlockhash))
    throw new FieldError({
      field: 'parameters.recentBlockhash',
      reason: 'must be a base58 32-byte blockhash',
    })
  return {
    unsignedTransaction: unsignedTransaction.replace(/^0x/, '').toLowerCase(),
    signWiths,
    sponsor: r.optBool('sponsor') ?? false,
    caip2: SOLANA_CAIP2_ALIASES[caip2] ?? caip2,
    ...(recentBlockhash !== undefined ? { recentBlockhash } : {}),
  }
}

/** What `prepareSolSend` settled outside any transaction: the message every key signs. */
export interface SolSendPrepared {
  /** The message to sign, hex: the given one, with the sponsor as fee payer and the blockhash set. */
  message: string
  /** Its required signers, in slot order. */
  signers: string[]
  /** Signatures of the given transaction kept as they are (hex, by signer): only when the message is unchanged. */
  kept: Record<string, string>
  sponsorId?: string
  /** The fee the fee payer pays, lamports (sponsored sends, counted against the caps). */
  fee?: string
  /** The node did not know the message's blockhash when it was signed (`SendTransactionRow`). */
  blockhashUnseen?: true
}

const invalid = (message: string, field = 'parameters.unsignedTransaction') =>
  new FieldError({ field, message })

function decode(hex: string): { transaction: Transaction; message: Message } {
  try {
    const transaction = getTransactionDecoder().decode(hexToBytes(hex))
    const message = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes) as
      | Message
      | { version: unknown }
    if (message.version !== 'legacy' && message.version !== 0)
      throw new Error(`message version ${String(message.version)} is not supported (legacy and v0 are)`)
    return { transaction, message: message as Message }
  } catch (error) {
    throw invalid(
      `parameters.unsignedTransaction is not a Solana wire transaction: ${(error as Error).message}`,
    )
  }
}

/**
 * The message with `sponsor` as its fee payer: already first, or put first as a new writable
 * signer (every account index moves up by one, the lookups' too, which count after the static
 * accounts). No instruction may name the sponsor: it signs only to pay the fee.
 */
function withFeePayer(message: Message, sponsor: string): Message {
  const accounts = message.staticAccounts as string[]
  const references = (index: number) =>
    message.instructions.some(
      (ix) => ix.programAddressIndex === index || (ix.accountIndices ?? []).includes(index),
    )
  if (accounts[0] === sponsor) {
    if (references(0)) throw invalid('an instruction of a sponsored transaction names the sponsor account')
    return message
  }
  if (accounts.includes(sponsor))
    throw invalid('a sponsored transaction names the sponsor account other than as its fee payer')
  return {
    ...message,
    header: { ...message.header, numSignerAccounts: message.header.numSignerAccounts + 1 },
    staticAccounts: [sponsor as Address, ...message.staticAccounts],
    instructions: message.instructions.map((ix) => ({
      ...ix,
      programAddressIndex: ix.programAddressIndex + 1,
      ...(ix.accountIndices ? { accountIndices: ix.accountIndices.map((i) => i + 1) } : {}),
    })),
  } as Message
}

/**
 * The Compute Budget of a sponsored transaction, whose priority fee the sponsor pays: a price per
 * compute unit above the organization's ceiling (`maxComputeUnitPrice`), or a Compute Budget
 * instruction the service cannot price, is refused before anything is signed.
 */
function sponsoredBudget(ctx: PrepareContext, message: Message): ComputeBudget {
  const budget = readComputeBudget(instructionsOf(message))
  if ('unreadable' in budget)
    throw invalid(
      `instruction ${budget.unreadable} of a sponsored transaction is a Compute Budget instruction the service cannot price (RequestHeapFrame, SetComputeUnitLimit, SetComputeUnitPrice and SetLoadedAccountsDataSizeLimit are known)`,
    )
  const ceiling = computeUnitPriceCeilingOf(ctx.runtime, ctx.organization)
  if (budget.microLamports > ceiling)
    throw invalid(
      `a sponsored transaction offers at most ${ceiling} micro-lamports per compute unit (the operator's ceiling); its SetComputeUnitPrice offers ${budget.microLamports}`,
    )
  return budget
}

/** A message's instructions as the fee readers take them: program id and data as hex. */
const instructionsOf = (message: Message) => {
  const accounts = message.staticAccounts as string[]
  return message.instructions.map((ix) => ({
    program_key: accounts[ix.programAddressIndex] ?? '',
    data: toHex((ix.data ?? new Uint8Array()) as Uint8Array),
  }))
}

const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes))
const toHex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')

/**
 * Checks the transaction and the signers, makes the sponsor the fee payer and sets the blockhash
 * (the one given, or a fresh one for a sponsored send), and reads the fee the sponsor would pay.
 */
export async function prepareSolSend(ctx: PrepareContext, p: SolSend): Promise<SolSendPrepared> {
  const rpc = rpcFor(ctx.runtime, p.caip2)
  const { transaction, message: given } = decode(p.unsignedTransaction)
  const sponsor = p.sponsor ? findSponsor(ctx.runtime, ctx.organization, 'solana') : undefined
  if (p.sponsor && !sponsor)
    throw new NotConfiguredError({
      code: 'SPONSORSHIP_NOT_CONFIGURED',
      field: 'parameters.sponsor',
      message: `no Solana sponsor account serves organization ${ctx.organization.id}`,
    })
  try {
    const genesis = (await rpc('getGenesisHash', [])) as string
    if (`solana:${genesis.slice(0, 32)}` !== p.caip2.slice(0, 'solana:'.length + 32))
      throw new FieldError({
        field: 'parameters.caip2',
        message: `the node configured for ${p.caip2} serves solana:${genesis.slice(0, 32)}`,
      })
    const blockhash =
      p.recentBlockhash ??
      (sponsor
        ? (
            (await rpc('getLatestBlockhash', [{ commitment: 'confirmed' }])) as {
              value: { blockhash: string }
            }
          ).value.blockhash
        : undefined)
    let message = sponsor ? withFeePayer(given, sponsor.address) : given
    const budget = sponsor ? sponsoredBudget(ctx, message) : undefined
    if (blockhash !== undefined) message = { ...message, lifetimeToken: blockhash } as Message
    const messageBytes = getCompiledTransactionMessageEncoder().encode(message) as Uint8Array
    const unchanged = toHex(messageBytes) === toHex(transaction.messageBytes as unknown as Uint8Array)
    const signers = (message.staticAccounts as string[]).slice(0, message.header.numSignerAccounts)
    const kept: Record<string, string> = {}
    if (unchanged)
      for (const [address, signature] of Object.entries(transaction.signatures))
        if (signature?.some((b) => b !== 0)) kept[address] = toHex(signature as Uint8Array)
    p.signWiths.forEach((signWith, index) => {
      if (isAddress(signWith) && !signers.includes(signWith))
        throw invalid(
          `${signWith} is not a required signer of this transaction (signers: ${signers.join(', ')})`,
          `parameters.signWiths[${index}]`,
        )
    })
    const missing = signers.find(
      (signer) => signer !== sponsor?.address && !p.signWiths.includes(signer) && !kept[signer],
    )
    if (missing !== undefined)
      throw invalid(
        `the transaction needs a signature of ${missing}, which parameters.signWiths does not list`,
        'parameters.signWiths',
      )
    let fee: string | undefined
    if (sponsor) {
      const answer = (await rpc('getFeeForMessage', [
        toBase64(messageBytes),
        { commitment: 'confirmed' },
      ])) as { value: number | string | null }
      if (answer.value === null)
        throw invalid(
          `the ${p.caip2} node does not know the transaction's blockhash ${String(message.lifetimeToken)}`,
          p.recentBlockhash !== undefined ? 'parameters.recentBlockhash' : 'parameters.unsignedTransaction',
        )
      // The node's fee has the priority fee in it; one that leaves it out is not trusted to.
      const nodeFee = BigInt(answer.value)
      // The precompiles' signatures too: the fee payer pays 5,000 lamports for each one verified.
      const bound = solanaFeeBound(signers.length, budget!, instructionsOf(message))
      fee = (nodeFee > bound ? nodeFee : bound).toString()
      await simulateSponsored(rpc, messageBytes, signers)
    }
    // Whether this cluster's node knows the blockhash (a sponsored send's is the node's own, or one
    // `getFeeForMessage` found). One it does not may be another cluster's, where the signer, who
    // holds the message and the signature the status answers, can land it: such a send keeps
    // what it reserved under spending limits even once it ends expired here (`solanaSender`).
    const unseen =
      !sponsor &&
      !(
        (await rpc('isBlockhashValid', [String(message.lifetimeToken), { commitment: 'processed' }])) as {
          value: boolean
        }
      ).value
    return {
      message: toHex(messageBytes),
      signers,
      kept,
      ...(sponsor ? { sponsorId: sponsor.id, ...(fee !== undefined ? { fee } : {}) } : {}),
      ...(unseen ? { blockhashUnseen: true } : {}),
    }
  } catch (error) {
    throw nodeFailure(error, p.caip2, 'parameters.unsignedTransaction')
  }
}

/**
 * Runs a sponsored transaction on the node before anything is signed (`simulateTransaction`
 * without signature checks, on the blockhash it will carry): one that would fail is refused
 * (`TRANSACTION_REVERTED`, with the program's error and logs as the published
 * `v1SolanaFailureDetails`), so the fee payer pays nothing for it.
 */
async function simulateSponsored(rpc: SendRpc, messageBytes: Uint8Array, signers: string[]): Promise<void> {
  const unsigned: Transaction = {
    messageBytes: messageBytes as unknown as TransactionMessageBytes,
    signatures: Object.fromEntries(signers.map((signer) => [signer, null])),
  }
  const answer = (await rpc('simulateTransaction', [
    getBase64EncodedWireTransaction(unsigned),
    { encoding: 'base64', sigVerify: false, replaceRecentBlockhash: false, commitment: 'confirmed' },
  ])) as { value?: { err?: unknown; logs?: unknown } }
  const err = answer?.value?.err
  if (err === null || err === undefined) return
  const logs = Array.isArray(answer.value?.logs)
    ? answer.value.logs
        .filter((line): line is string => typeof line === 'string')
        .slice(-20)
        .map((line) => nodeText(rpc, line))
    : []
  const transactionErrorJson = nodeText(rpc, JSON.stringify(err))
  const solana = { source: 'simulation', transactionErrorJson, logs }
  throw new ConflictError({
    code: 'TRANSACTION_REVERTED',
    field: 'parameters.unsignedTransaction',
    message: `the sponsored transaction would fail (${transactionErrorJson}); nothing was signed`,
    extra: { error: { message: `simulation failed: ${transactionErrorJson}`, solana } },
  })
}

/**
 * In the activity's transaction: counts the sponsored fee against the caps, signs the message with
 * every `signWiths` account and the sponsor's key, and records the send with its broadcast job.
 */
export async function runSolSend(
  ctx: ActivityContext,
  p: SolSend,
): Promise<{ sendTransactionStatusId: string }> {
  const prepared = ctx.prepared as SolSendPrepared
  const accounts = await Promise.all(
    p.signWiths.map(async (signWith, index) => {
      const field = `parameters.signWiths[${index}]`
      const account = await findSigner(ctx.tx, ctx.organization.id, signWith, field)
      if (account.curve !== 'CURVE_ED25519')
        throw new FieldError({ field, message: `${signWith} is not a Solana account` })
      if (!prepared.signers.includes(account.address))
        throw new FieldError({
          field,
          message: `${account.address} is not a required signer of this transaction`,
        })
      return account
    }),
  )
  const sponsor = prepared.sponsorId ? await ctx.tx.get('sponsors', prepared.sponsorId) : undefined
  if (prepared.sponsorId && !sponsor)
    throw new NotConfiguredError({
      code: 'SPONSORSHIP_NOT_CONFIGURED',
      field: 'parameters.sponsor',
      message: 'the sponsor account is gone',
    })
  const id = ctx.newId()
  if (sponsor)
    await checkGasCaps(ctx, { gas: BigInt(prepared.fee ?? '0'), sendTransactionId: id, unit: 'lamports' })
  // What each signer's transfers move counts under the spending limits covering it, reserved here.
  for (const account of accounts)
    await reserveSpend(spendContextOf(ctx), {
      signer: account.address,
      describe: () => {
        const spend = describeTransaction('TRANSACTION_TYPE_SOLANA', p.unsignedTransaction)
        // The sponsor pays the fee of a sponsored send, whoever the given transaction names.
        return spend.kind === 'solana' && sponsor ? { ...spend, sponsored: true } : spend
      },
      reference: id,
    })
  const messageBytes = hexToBytes(prepared.message)
  const signatures = new Map<string, Uint8Array>(
    Object.entries(prepared.kept).map(([address, signature]) => [address, hexToBytes(signature)]),
  )
  for (const account of accounts)
    signatures.set(
      account.address,
      withAccountKey(ctx.runtime, account, (key) => ed25519.sign(messageBytes, key)),
    )
  if (sponsor) {
    const key = ctx.runtime.open(sponsor.sealedPrivateKey)
    try {
      signatures.set(sponsor.address, ed25519.sign(messageBytes, key))
    } finally {
      key.fill(0)
    }
  }
  // The wire order of the signatures is the order of the message's signers.
  const transaction: Transaction = {
    messageBytes: messageBytes as unknown as TransactionMessageBytes,
    signatures: Object.fromEntries(
      prepared.signers.map((signer) => [signer, (signatures.get(signer) ?? null) as SignatureBytes | null]),
    ),
  }
  const message = getCompiledTransactionMessageDecoder().decode(messageBytes) as Message
  await recordSend(ctx, {
    id,
    organizationId: ctx.organization.id,
    activityId: ctx.activityId,
    caip2: p.caip2,
    sender: prepared.signers[0]!,
    account: accounts[0]!.address,
    sponsored: Boolean(sponsor),
    ...(sponsor ? { sponsorId: sponsor.id } : {}),
    signedTransaction: getBase64EncodedWireTransaction(transaction),
    txHash: getSignatureFromTransaction(transaction),
    ...(prepared.blockhashUnseen ? { blockhashUnseen: true as const } : {}),
  })
  ctx.runtime.emit('send.signed', {
    chain: 'solana',
    sponsored: Boolean(sponsor),
    calls: message.instructions.length,
  })
  return { sendTransactionStatusId: id }
}
