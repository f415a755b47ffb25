/**
 * One JSON-RPC call to an EVM node: resolves with `result`, rejects with the node's error message.
 * The delegate helpers take this rather than a URL so that callers keep their own transport,
 * timeouts and logging.
 */
export type EthRpc = (method: string, params: unknown[]) => Promise<unknown>

/** Options of `httpEthRpc`. */
export interface HttpEthRpcOptions {
  /** @default globalThis.fetch */
  fetch?: typeof globalThis.fetch
  /** Per call. @default 15_000 */
  timeoutMs?: number
}

/** An `EthRpc` over HTTP POST to `url`. */
export function httpEthRpc(url: string, options: HttpEthRpcOptions = {}): EthRpc {
  const fetch = options.fetch ?? globalThis.fetch
  const timeoutMs = options.timeoutMs ?? 15_000
  let id = 0
  return async (method, params) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
      signal: AbortSignal.timeout(timeoutMs),
    })
    const body = (await response.json()) as { result?: unknown; error?: { message?: string } }
    if (body.error) throw new Error(`${method}: ${body.error.message ?? 'JSON-RPC error'}`)
    return body.result
  }
}
