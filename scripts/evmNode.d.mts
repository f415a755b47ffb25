export type { EvmNode } from '../packages/service/src/dev/startEvmNode.ts'

import type { EvmNode } from '../packages/service/src/dev/startEvmNode.ts'

export declare function jsonRpc(url: string, method: string, params?: unknown[]): Promise<unknown>
export declare function startEvmNode(options?: {
  port?: number
  chainId?: number
  timeoutMs?: number
}): Promise<EvmNode>
