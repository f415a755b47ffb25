import { ApiError, FieldError, ServiceError, UnavailableError } from '../kernel/base/errors.ts'
/** The node could not be reached or did not answer in time: the call may be retried. */
export class RpcUnreachableError extends ServiceError {
  override name = 'RpcUnreachableError'
}

/** The node answered with a JSON-RPC error. */
export class RpcRefusedError extends ServiceError {
  override name = 'RpcRefusedError'
  constructor(
    message: string,
    readonly data?: string,
  ) {
    super(message)
  }
}

export type SendRpc = (method: string, params: unknown[]) => Promise<unknown>

/** Longest part of a node's JSON-RPC error message passed on. */
const MAX_NODE_MESSAGE = 300

/**
 * A node's JSON-RPC error message as the service passes it on: without anything that looks like a
 * URL (a node or proxy may quote its own, credentials and all) and bounded in length.
 */
export function redactNodeMessage(message: string): string {
  const redacted = message
    .replace(/[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]*/gi, '<url>')
    .replace(/[^\s/:@"'<>]+:[^\s/@"'<>]+@[^\s"'<>]+/g, '<url>')
    .replace(/\s+/g, ' ')
    .trim()
  return redacted.length > MAX_NODE_MESSAGE ? `${redacted.slice(0, MAX_NODE_MESSAGE)}…` : redacted
}

/** Why a call did not reach the node, in words that quote nothing of the node's own. */
function unreachable(method: string, error: unknown): RpcUnreachableError {
  const name = (error as { name?: string })?.name
  const code = (error as { cause?: { code?: unknown } })?.cause?.code
  const why =
    name === 'TimeoutError' || name === 'AbortError'
      ? 'did not answer in time'
      : typeof code === 'string' && /^E[A-Z_]+$/.test(code)
        ? `could not be reached (${code})`
        : 'could not be reached'
  return new RpcUnreachableError(`${method}: the node ${why}`)
}

/**
 * A JSON-RPC caller that tells an unreachable node (`RpcUnreachableError`: retry later) from a
 * refusal (`RpcRefusedError`, with the revert data when the node gives it). Credentials in the URL
 * (`https://user:password@host/…`) are sent as HTTP Basic authorization (fetch refuses URLs that
 * carry them); no error this raises quotes the URL, or the text of a connection failure or of a
 * body that is not JSON-RPC.
 */
export function sendRpc(url: string, fetch: typeof globalThis.fetch, timeoutMs: number): SendRpc {
  const target = new URL(url)
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (target.username || target.password) {
    const credentials = `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`
    headers.authorization = `Basic ${btoa(String.fromCharCode(...new TextEncoder().encode(credentials)))}`
    target.username = ''
    target.password = ''
  }
  const endpoint = target.toString()
  let id = 0
  return async (method, params) => {
    let response: Response
    try {
      response = await fetch(endpoint, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
        signal: AbortSignal.timeout(timeoutMs),
      })
    } catch (error) {
      throw unreachable(method, error)
    }
    let body: { result?: unknown; error?: { message?: string; data?: unknown } }
    try {
      body = (await response.json()) as typeof body
    } catch (error) {
      if ((error as { name?: string })?.name === 'TimeoutError') throw unreachable(method, error)
      throw new RpcUnreachableError(
        `${method}: the node answered HTTP ${response.status} without a JSON-RPC body`,
      )
    }
    if (body === null || typeof body !== 'object')
      throw new RpcUnreachableError(
        `${method}: the node answered HTTP ${response.status} without a JSON-RPC body`,
      )
    if (body.error)
      throw new RpcRefusedError(
        redactNodeMessage(String(body.error.message ?? 'JSON-RPC error')),
        typeof body.error.data === 'string' && /^0x[0-9a-fA-F]*$/.test(body.error.data)
          ? body.error.data
          : undefined,
      )
    if (!('result' in body))
      throw new RpcUnreachableError(
        `${method}: the node answered HTTP ${response.status} without a JSON-RPC result`,
      )
    return body.result
  }
}

/**
 * What `prepare` answers when the node failed it: an ApiError as it is, a node's refusal as
 * `TRANSACTION_INVALID` on `field`, an unreachable node (a timeout, a closed connection, an answer
 * that is not JSON-RPC) as `RPC_FAILED`, and anything else (an answer of the wrong shape) as
 * `RPC_FAILED` too, in the service's own words: no URL, credential or upstream text.
 */
export function nodeFailure(error: unknown, caip2: string, field: string): ApiError {
  if (error instanceof ApiError) return error
  if (error instanceof RpcRefusedError)
    return new FieldError({
      code: 'TRANSACTION_INVALID',
      field,
      message: `the ${caip2} node refused the transaction: ${error.message}`,
    })
  if (error instanceof RpcUnreachableError)
    return new UnavailableError({
      code: 'RPC_FAILED',
      message: `the ${caip2} node did not answer: ${error.message}`,
    })
  return new UnavailableError({ code: 'RPC_FAILED', message: `the ${caip2} node's answer could not be read` })
}
