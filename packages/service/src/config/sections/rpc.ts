import { z } from 'zod'

const CAIP2 = /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/

const isHttpUrl = (value: string) => {
  try {
    const url = new URL(value)
    return url.protocol === 'http:' || url.protocol === 'https:'
  } catch {
    return false
  }
}

export const rpcSection = z
  .record(
    z.string().regex(CAIP2, { error: 'must be a CAIP-2 chain id such as "eip155:1"' }),
    z
      .string({ error: 'must be an http(s) URL (a string)' })
      .refine(isHttpUrl, { error: 'must be an http(s) URL' })
      .describe('The http(s) URL of the node for that chain.'),
  )
  .meta({ keyName: 'caip2' })
  .default({})
  .describe(
    'JSON-RPC nodes by CAIP-2 chain id for sends, e.g. `"eip155:1" = "https://rpc.example"` or `"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" = "https://api.mainnet-beta.solana.com"`.',
  )

export type RpcSection = z.infer<typeof rpcSection>

export function rpcOptions(parsed: RpcSection): Record<string, string> {
  return { ...parsed }
}
