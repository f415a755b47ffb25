import { decodeSignedTransaction } from '../crypto/index.ts'
import { withField } from '../domain/params.ts'
import { ApiError } from '../errors.ts'
import { defineActivity } from '../registry.ts'

const CAIP2 = /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/

/**
 * Broadcasts a signed Ethereum transaction through the JSON-RPC node configured for its CAIP-2
 * chain (`rpc` option / `--rpc`), after checking it decodes, is signed, and targets that chain.
 */
export const ethSendRawTransaction = defineActivity('eth_send_raw_transaction', {
  parse: (r) => ({
    signedTransaction: r.string('signedTransaction', { max: 128 * 1024 }),
    caip2: r.string('caip2', { max: 41, pattern: CAIP2, hint: 'a CAIP-2 chain id like eip155:1' }),
  }),
  // The broadcast (bounded by a 15 s timeout) holds no database transaction.
  prepare: async (ctx, p) => {
    if (!p.caip2.startsWith('eip155:'))
      throw new ApiError('FIELD_INVALID', 'caip2 must be an eip155 chain', 'parameters.caip2')
    const decoded = withField('parameters', () => decodeSignedTransaction(p.signedTransaction))
    const chainId = p.caip2.slice('eip155:'.length)
    if (decoded.chainId !== undefined && decoded.chainId.toString() !== chainId)
      throw new ApiError(
        'TRANSACTION_INVALID',
        `transaction is for chain ${decoded.chainId}, not ${p.caip2}`,
        'parameters.signedTransaction',
      )
    const url = ctx.runtime.options.rpc[p.caip2]
    if (!url)
      throw new ApiError(
        'RPC_NOT_CONFIGURED',
        `no JSON-RPC node is configured for ${p.caip2}`,
        'parameters.caip2',
      )
    const raw = p.signedTransaction.startsWith('0x') ? p.signedTransaction : `0x${p.signedTransaction}`
    let reply: { result?: unknown; error?: { code?: number; message?: string } }
    try {
      const response = await ctx.runtime.options.fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] }),
        signal: AbortSignal.timeout(15_000),
      })
      reply = (await response.json()) as typeof reply
    } catch (error) {
      throw new ApiError('RPC_FAILED', `the ${p.caip2} node did not answer: ${(error as Error).message}`)
    }
    if (reply.error)
      throw new ApiError(
        'TRANSACTION_INVALID',
        `the ${p.caip2} node refused the transaction: ${reply.error.message ?? 'unknown error'}`,
        'parameters.signedTransaction',
      )
    if (typeof reply.result === 'string' && reply.result.toLowerCase() !== decoded.hash.toLowerCase())
      throw new ApiError('RPC_FAILED', `the node reported hash ${reply.result}, expected ${decoded.hash}`)
    return { transactionHash: decoded.hash }
  },
  run: (ctx) => ctx.prepared as { transactionHash: string },
})
