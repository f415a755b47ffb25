import { ApiError } from '../errors.ts'
/** The node could not be reached or did not answer in time: the call may be retried. */
export class RpcUnreachableError extends Error {
  override name = 'RpcUnreachableError'
}

/** The node answered with a JSON-RPC error. */
export class RpcRefusedError extends Error {
  override name = 'RpcRefusedError'
  constructor(
    message: string,
    readonly data?: string,
  ) {
    super(message)
  }
}

export type SendRpc = (method: string, params: unknown[]) => Promise<unknown>

/**
 * A JSON-RPC caller that tells an unreachable node (`RpcUnreachableError`: retry later) from a
 * refusal (`RpcRefusedError`, with the revert data when the node gives it).
 */
export function sendRpc(url: string, fetch: typeof globalThis.fetch, timeoutMs: number): SendRpc {
  let id = 0
  return async (method, params) => {
    let body: { result?: unknown; error?: { message?: string; data?: unknown } }
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
        signal: AbortSignal.timeout(timeoutMs),
      })
      body = (await response.json()) as typeof body
    } catch (error) {
      throw new RpcUnreachableError(`${method}: ${(error as Error).message}`)
    }
    if (body.error)
      throw new RpcRefusedError(
        body.error.message ?? 'JSON-RPC error',
        typeof body.error.data === 'string' ? body.error.data : undefined,
      )
    return body.result
  }
}

/**
 * What `prepare` answers when the node failed it: an ApiError as it is, a node's refusal as
 * `TRANSACTION_INVALID` on `field`, anything else (a timeout, a closed connection) as `RPC_FAILED`.
 */
export function nodeFailure(error: unknown, caip2: string, field: string): ApiError {
  if (error instanceof ApiError) return error
  if (error instanceof RpcRefusedError)
    return new ApiError(
      'TRANSACTION_INVALID',
      `the ${caip2} node refused the transaction: ${error.message}`,
      field,
    )
  return new ApiError('RPC_FAILED', `the ${caip2} node did not answer: ${(error as Error).message}`)
}
