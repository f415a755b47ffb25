/**
 * Decodes call data with an ABI (viem's `decodeFunctionData` has this shape): the app passes it,
 * so the kit never imports viem, an optional peer, itself.
 */
export type CallDecoder = (parameters: { abi: readonly unknown[]; data: `0x${string}` }) => {
  functionName: string
  args?: readonly unknown[] | undefined
}

/** A call's function and arguments as shown to the user. */
export interface DecodedCall {
  functionName: string
  args: string[]
}

const show = (value: unknown): string => {
  if (typeof value === 'bigint') return value.toString()
  if (Array.isArray(value)) return `[${value.map(show).join(', ')}]`
  if (value && typeof value === 'object')
    return `{ ${Object.entries(value)
      .map(([k, v]) => `${k}: ${show(v)}`)
      .join(', ')} }`
  return String(value)
}

/**
 * Decodes each call's data with its ABI; `null` where there is no ABI or the data does not match
 * it (the raw data is shown then). Loaded only when a call has an ABI and the app gave a decoder.
 */
export function decodeCalls(
  calls: readonly { data?: string | undefined; abi?: readonly unknown[] | undefined }[],
  decodeFunctionData: CallDecoder,
) {
  return calls.map((call): DecodedCall | null => {
    if (!call.abi || !call.data || call.data === '0x') return null
    try {
      const { functionName, args } = decodeFunctionData({
        abi: call.abi,
        data: call.data as `0x${string}`,
      })
      return { functionName, args: (args ?? []).map(show) }
    } catch {
      return null
    }
  })
}
