import {
  type Address,
  BundleTooLargeError,
  type Chain,
  DuplicateIdError,
  type Hex,
  hexToBigInt,
  InvalidParamsRpcError,
  numberToHex,
  UnknownBundleIdError,
  UnsupportedChainIdError,
  UnsupportedNonOptionalCapabilityError,
  UnsupportedProviderMethodError,
  type WalletCallReceipt,
  type WalletGetCallsStatusReturnType,
} from 'viem'
import { MAX_CALLS, sendCalls } from '../core/actions/activities/sendCalls.ts'
import { getCallsStatus } from '../core/actions/queries/getCallsStatus.ts'
import { getSendCapabilities } from '../core/actions/queries/getSendCapabilities.ts'
import type { Latchkey } from '../core/createLatchkey.ts'

/**
 * The capability an app asks for (`capabilities: { gasSponsorship: {} }` in `wallet_sendCalls`)
 * and `wallet_getCapabilities` reports (`{ gasSponsorship: { supported: true } }`) when the
 * organization's sponsor pays the gas of a batch.
 */
export const GAS_SPONSORSHIP = 'gasSponsorship'

const KNOWN_CAPABILITIES = new Set([GAS_SPONSORSHIP, 'atomic'])

/** `wallet_sendCalls`'s one parameter (EIP-5792 2.0.0). */
interface SendCallsRequest {
  version?: string
  id?: string
  from?: Address
  chainId?: Hex
  atomicRequired?: boolean
  calls?: { to?: Address; data?: Hex; value?: Hex; capabilities?: Capabilities }[]
  capabilities?: Capabilities
}
type Capabilities = Record<string, { optional?: boolean } & Record<string, unknown>>

export interface Eip5792Context {
  client: Latchkey
  chains: readonly Chain[]
  organizationId: string | undefined
  sponsor: boolean
  /** The signed-in user's account `from` names (4100 when it is not theirs, 4001 when signed out). */
  account: (from: unknown) => Promise<{ address: Address }>
  /** A JSON-RPC call on the given chain's node. */
  rpc: (chain: Chain, method: string, params: unknown[]) => Promise<unknown>
  showCallsStatus: ((id: string) => void | Promise<void>) | undefined
}

/** A batch's id says its chain, so its status can be read after a reload: `<statusId>@<chain id hex>`. */
const batchId = (sendTransactionStatusId: string, chainId: number) =>
  `${sendTransactionStatusId}@${numberToHex(chainId)}`

/**
 * EIP-5792 over `sendCalls` and `getCallsStatus`: every batch runs atomically (one call as an
 * EIP-1559 transaction, several as one EIP-7702 batch), so `atomicRequired` always holds; with
 * the `gasSponsorship` capability (or the provider's `sponsor`) the organization pays the gas.
 */
export function createEip5792(context: Eip5792Context) {
  // Ids an app chose, to the batch they name; the wallet's own ids carry everything themselves.
  const appIds = new Map<string, string>()

  const chainOf = (chainId: Hex | number | undefined, current: Chain): Chain => {
    if (chainId === undefined) return current
    const found = context.chains.find((c) => c.id === Number(chainId))
    if (!found) throw new UnsupportedChainIdError(new Error(`Chain ${String(chainId)} is not configured`))
    return found
  }

  const resolve = (id: unknown): { sendTransactionStatusId: string; chain: Chain } => {
    if (typeof id !== 'string' || id === '') throw new InvalidParamsRpcError(new Error('give a batch id'))
    const own = appIds.get(id) ?? id
    const at = own.lastIndexOf('@')
    if (at <= 0) throw new UnknownBundleIdError(new Error(id))
    const chain = context.chains.find((c) => c.id === Number(own.slice(at + 1)))
    if (!chain) throw new UnknownBundleIdError(new Error(id))
    return { sendTransactionStatusId: own.slice(0, at), chain }
  }

  /** Refuses capabilities it does not know unless the app marked them optional (5700). */
  const checkCapabilities = (capabilities: Capabilities | undefined) => {
    for (const [name, value] of Object.entries(capabilities ?? {}))
      if (!KNOWN_CAPABILITIES.has(name) && !value?.optional)
        throw new UnsupportedNonOptionalCapabilityError(new Error(name))
  }

  /**
   * Per chain, what the service does for the organization (`getSendCapabilities`): atomic batches
   * where it runs several calls as one transaction, sponsorship where it takes `sponsor: true`.
   * Signed out (or the service unreachable), what the provider was configured with.
   */
  async function getCapabilities(params: unknown): Promise<Record<Hex, Record<string, unknown>>> {
    const [address, chainIds] = (Array.isArray(params) ? params : []) as [Address?, Hex[]?]
    if (address) await context.account(address)
    const wanted = chainIds ? new Set(chainIds.map((c) => Number(c))) : undefined
    const served = await getSendCapabilities(
      context.client,
      context.organizationId ? { organizationId: context.organizationId } : {},
    ).catch(() => undefined)
    const out: Record<Hex, Record<string, unknown>> = {}
    for (const chain of context.chains) {
      if (wanted && !wanted.has(chain.id)) continue
      const onService = served?.chains.find((c) => c.caip2 === `eip155:${chain.id}`)
      out[numberToHex(chain.id)] = served
        ? {
            atomic: { status: onService?.atomicBatch ? 'supported' : 'unsupported' },
            [GAS_SPONSORSHIP]: { supported: onService?.gasSponsorship ?? false },
          }
        : { atomic: { status: 'supported' }, [GAS_SPONSORSHIP]: { supported: context.sponsor } }
    }
    return out
  }

  /** A batch without `chainId` runs on `current`, the chain the app was on when it asked. */
  async function send(params: unknown, current: Chain): Promise<{ id: string }> {
    const request = (Array.isArray(params) ? params[0] : undefined) as SendCallsRequest | undefined
    if (!request || !Array.isArray(request.calls) || request.calls.length === 0)
      throw new InvalidParamsRpcError(new Error('no calls'))
    if (request.version !== undefined && !/^(1|2)\./.test(request.version))
      throw new InvalidParamsRpcError(new Error(`version ${request.version}`))
    if (request.calls.length > MAX_CALLS) throw new BundleTooLargeError(new Error(`over ${MAX_CALLS} calls`))
    if (request.id !== undefined && appIds.has(request.id)) throw new DuplicateIdError(new Error(request.id))
    checkCapabilities(request.capabilities)
    for (const call of request.calls) checkCapabilities(call.capabilities)
    const chain = chainOf(request.chainId, current)
    const calls = request.calls.map((call, index) => {
      if (!call.to) throw new InvalidParamsRpcError(new Error(`calls[${index}].to`))
      return {
        to: call.to,
        ...(call.value !== undefined ? { value: hexToBigInt(call.value).toString() } : {}),
        ...(call.data !== undefined ? { data: call.data } : {}),
      }
    })
    const { address } = await context.account(request.from)
    const sponsor = context.sponsor || request.capabilities?.[GAS_SPONSORSHIP] !== undefined
    const { sendTransactionStatusId } = await sendCalls(context.client, {
      from: address,
      caip2: `eip155:${chain.id}`,
      calls,
      ...(sponsor ? { sponsor: true } : {}),
      organizationId: context.organizationId,
    })
    const id = batchId(sendTransactionStatusId, chain.id)
    if (request.id === undefined) return { id }
    appIds.set(request.id, id)
    return { id: request.id }
  }

  async function status(params: unknown): Promise<WalletGetCallsStatusReturnType> {
    const id = Array.isArray(params) ? params[0] : undefined
    const { sendTransactionStatusId, chain } = resolve(id)
    const read = await getCallsStatus(context.client, {
      sendTransactionStatusId,
      organizationId: context.organizationId,
    })
    const base = { version: '2.0.0', id: id as string, chainId: numberToHex(chain.id), atomic: true }
    const txHash = read.eth?.txHash
    if (read.status === 'pending') return { ...base, status: 100 }
    // The node's receipt as it is: EIP-5792's receipt fields are a subset of it.
    const receipt = txHash
      ? ((await context.rpc(chain, 'eth_getTransactionReceipt', [txHash])) as WalletCallReceipt | null)
      : null
    if (read.status === 'success') {
      // The node that answers this provider may lag the one that saw it included.
      if (!receipt) return { ...base, status: 100 }
      return { ...base, status: receipt.status === '0x1' ? 200 : 500, receipts: [receipt] }
    }
    // Failed on-chain (reverted: 500, with its receipt) or never included (400).
    if (receipt) return { ...base, status: 500, receipts: [receipt] }
    return { ...base, status: 400 }
  }

  async function show(params: unknown): Promise<null> {
    const id = Array.isArray(params) ? params[0] : undefined
    resolve(id)
    if (!context.showCallsStatus)
      throw new UnsupportedProviderMethodError(
        new Error('wallet_showCallsStatus needs the provider option showCallsStatus'),
      )
    await context.showCallsStatus(id as string)
    return null
  }

  return { getCapabilities, send, status, show }
}
