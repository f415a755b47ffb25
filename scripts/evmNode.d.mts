export interface EvmNode {
  url: string
  chainId: number
  caip2: string
  /** The ten unlocked, funded development accounts. */
  accounts: `0x${string}`[]
  /** One JSON-RPC call to the node; throws with the node's message on an error. */
  rpc(method: string, params?: unknown[]): Promise<unknown>
  /** The transaction's receipt once it is mined (polls; throws after `waitMs`, default 10 s). */
  waitForReceipt(hash: string, waitMs?: number): Promise<Record<string, unknown>>
  close(): Promise<void>
}
export declare function anvilBinary(): string
export declare function jsonRpc(url: string, method: string, params?: unknown[]): Promise<unknown>
export declare function startEvmNode(options?: {
  port?: number
  chainId?: number
  timeoutMs?: number
}): Promise<EvmNode>
