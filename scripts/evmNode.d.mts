export interface EvmNode {
  url: string
  chainId: number
  caip2: string
  /** The ten unlocked, funded development accounts. */
  accounts: `0x${string}`[]
  close(): Promise<void>
}
export declare function anvilBinary(): string
export declare function startEvmNode(options?: {
  port?: number
  chainId?: number
  timeoutMs?: number
}): Promise<EvmNode>
