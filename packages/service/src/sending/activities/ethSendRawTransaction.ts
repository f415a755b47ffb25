import { Transaction } from 'micro-eth-signer'
import { withField } from '../../domain/params.ts'
import { findSigner } from '../../domain/wallets.ts'
import { FieldError, PermissionError } from '../../kernel/base/errors.ts'
import { decodeSignedTransaction } from '../../kernel/crypto/index.ts'
import { defineActivity } from '../../kernel/registry.ts'
import { recordSend } from '../ethSend.ts'
import { checkNonceGap, forgetNonceHole, nonceIdOf, rpcFor, submittedWithOf } from '../sendingState.ts'
import { nodeFailure, RpcRefusedError } from '../sendRpc.ts'

const CAIP2 = /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/

/** What `prepare` learnt: the transaction's hash and sender, checked against the node. */
interface Prepared {
  transactionHash: string
  sender: string
  nonce: string
  /** The node's pending count of the sender (`eth_getTransactionCount(sender, pending)`). */
  pending: string
}

/**
 * Sends a signed Ethereum transaction through the JSON-RPC node configured for its CAIP-2 chain
 * (`rpc` option / `--rpc`), after checking it decodes, is signed, targets that chain, and that the
 * node would take it (the sender's nonce is not spent, its balance covers the transaction) and
 * mine it (its nonce at most `MAX_NONCE_GAP` past the sender's next, `checkNonceGap`). The
 * transaction is committed with the activity and broadcast by the send worker after commit, like
 * `eth_send_transaction`'s; its hash is the result.
 *
 * Anyone's signed transaction may be relayed, but only the caller's organization's own accounts'
 * nonce counters move with it (a raw send of one of its accounts at a nonce the counter has not
 * passed takes it: `countedNonce`); another organization's account's, or an address's outside the
 * service, are left as they are. A transaction of a sponsor account of the service (a sponsored
 * send's version, public on the node) is refused (403 `SPONSOR_TRANSACTION_REFUSED`): only the
 * service's worker sends those, and every user's sponsored sends share that counter.
 */
export const ethSendRawTransaction = defineActivity('eth_send_raw_transaction', {
  parse: (r) => ({
    signedTransaction: r.string('signedTransaction', { max: 128 * 1024 }),
    caip2: r.string('caip2', { max: 41, pattern: CAIP2, hint: 'a CAIP-2 chain id like eip155:1' }),
  }),
  // The node's reads (each bounded by the RPC timeout) hold no database transaction.
  prepare: async (ctx, p): Promise<Prepared> => {
    if (!p.caip2.startsWith('eip155:'))
      throw new FieldError({ field: 'parameters.caip2', message: 'caip2 must be an eip155 chain' })
    const decoded = withField('parameters', () => decodeSignedTransaction(p.signedTransaction))
    // Every sponsor key the service sealed (configured now, or before: its sends may still be open).
    const sponsor = (await ctx.reads.all('sponsors')).find(
      (row) => row.address.toLowerCase() === decoded.from.toLowerCase(),
    )
    if (sponsor)
      throw new PermissionError({
        code: 'SPONSOR_TRANSACTION_REFUSED',
        field: 'parameters.signedTransaction',
        message: `the transaction is signed by ${sponsor.address}, a sponsor account of this service: only the service sends a sponsor's transactions (its worker broadcasts and replaces every sponsored send), never eth_send_raw_transaction`,
      })
    const chainId = p.caip2.slice('eip155:'.length)
    if (decoded.chainId !== undefined && decoded.chainId.toString() !== chainId)
      throw new FieldError({
        code: 'TRANSACTION_INVALID',
        field: 'parameters.signedTransaction',
        message: `transaction is for chain ${decoded.chainId}, not ${p.caip2}`,
      })
    const rpc = rpcFor(ctx.runtime, p.caip2)
    let pendingCount = 0n
    const refused = (reason: string) =>
      new FieldError({
        code: 'TRANSACTION_INVALID',
        field: 'parameters.signedTransaction',
        message: `the ${p.caip2} node refused the transaction: ${reason}`,
      })
    try {
      const [balance, mined, pending] = await Promise.all([
        rpc('eth_getBalance', [decoded.from, 'pending']) as Promise<string>,
        rpc('eth_getTransactionCount', [decoded.from, 'latest']) as Promise<string>,
        rpc('eth_getTransactionCount', [decoded.from, 'pending']) as Promise<string>,
      ])
      pendingCount = BigInt(pending)
      if (decoded.nonce < BigInt(mined))
        throw refused(`nonce too low: next nonce ${BigInt(mined)}, transaction nonce ${decoded.nonce}`)
      const raw = Transaction.fromHex(p.signedTransaction.trim().replace(/^0x/, '').toLowerCase()).raw as {
        value?: bigint
        gasLimit?: bigint
        maxFeePerGas?: bigint
        gasPrice?: bigint
      }
      const cost = (raw.value ?? 0n) + (raw.gasLimit ?? 0n) * (raw.maxFeePerGas ?? raw.gasPrice ?? 0n)
      if (BigInt(balance) < cost)
        throw refused(`insufficient funds for gas * price + value: have ${BigInt(balance)} want ${cost}`)
    } catch (error) {
      if (error instanceof RpcRefusedError) throw refused(error.message)
      throw nodeFailure(error, p.caip2, 'parameters.signedTransaction')
    }
    return {
      transactionHash: decoded.hash,
      sender: decoded.from,
      nonce: decoded.nonce.toString(),
      pending: pendingCount.toString(),
    }
  },
  run: async (ctx, p) => {
    const prepared = ctx.prepared as Prepared
    const id = nonceIdOf(p.caip2, prepared.sender)
    const nonce = BigInt(prepared.nonce)
    const row = await ctx.tx.get('nonces', id)
    checkNonceGap({
      counter: row,
      pending: BigInt(prepared.pending),
      nonce,
      caip2: p.caip2,
      address: prepared.sender,
      field: 'parameters.signedTransaction',
      code: 'TRANSACTION_INVALID',
    })
    // Only an account of the caller's own organization has its counter moved: the same counter its
    // eth_send_transaction takes nonces from. Anyone else's transaction (another organization's
    // account, whose public versions anyone may copy; an address outside the service) is relayed
    // and tracked, and its counter left as it is: nothing this send does, nor what the worker does
    // when the node refuses it, moves it. Of its own account's counter, the send takes its nonce
    // when the counter has not passed it (later sends the service signs take nonces after it) or
    // holds it as a hole (no hole any more); a nonce the counter passed, which another send of the
    // account may hold, is not taken again. What it took, the worker gives back or fills should the
    // node refuse it (`countedNonce`).
    const own = await findSigner(ctx.tx, ctx.organization.id, prepared.sender, 'sender').catch(
      () => undefined,
    )
    const ahead = !row || BigInt(row.next) <= nonce
    const counted =
      own?.curve === 'CURVE_SECP256K1' && (ahead || row?.holes?.includes(prepared.nonce) === true)
    // The same signed transaction given again while its send is open is that send: answered as it
    // was, nothing written (its nonce was counted then).
    const sendId = ctx.newId()
    const send = await recordSend(
      ctx,
      {
        id: sendId,
        organizationId: ctx.organization.id,
        activityId: ctx.activityId,
        caip2: p.caip2,
        sender: prepared.sender,
        account: prepared.sender,
        sponsored: false,
        nonce: prepared.nonce,
        signedTransaction: p.signedTransaction.startsWith('0x')
          ? p.signedTransaction
          : `0x${p.signedTransaction}`,
        txHash: prepared.transactionHash,
        ...(counted ? { countedNonce: true as const } : {}),
        // A fill of the nonce it took counts under this credential's spending limits.
        ...(counted ? { submittedWith: submittedWithOf(ctx.caller) } : {}),
      },
      { dedupe: true },
    )
    if (send.id !== sendId || !counted) return { transactionHash: prepared.transactionHash }
    await forgetNonceHole(ctx.tx, { now: ctx.now, caip2: p.caip2, address: prepared.sender, nonce })
    if (ahead) {
      const counter = await ctx.tx.get('nonces', id)
      await ctx.tx.put('nonces', {
        ...(counter ?? { id, createdAt: ctx.now }),
        next: (nonce + 1n).toString(),
        updatedAt: ctx.now,
      })
    }
    return { transactionHash: prepared.transactionHash }
  },
})
