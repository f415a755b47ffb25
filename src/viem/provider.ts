import {
  type Address,
  type Chain,
  createClient,
  getAddress,
  type Hex,
  hexToNumber,
  http,
  InvalidParamsRpcError,
  isAddressEqual,
  numberToHex,
  ProviderDisconnectedError,
  RpcError,
  SwitchChainError,
  type TransactionRequest,
  UnauthorizedProviderError,
  UnsupportedProviderMethodError,
  UserRejectedRequestError,
} from 'viem'
import { prepareTransactionRequest, sendRawTransaction } from 'viem/actions'
import { recoverAuthorizationAddress } from 'viem/utils'
import { getWalletAccounts } from '../core/actions/queries/getWalletAccounts.ts'
import type { Latchkey } from '../core/createLatchkey.ts'
import { LatchkeyError } from '../core/errors.ts'
import { isUsable } from '../core/session/sessionMachine.ts'
import type { Session, SessionState } from '../core/session/types.ts'
import { type LatchkeyAccount, toLatchkeyAccount } from './account.ts'
import { createEip5792 } from './eip5792.ts'

export type CreateLatchkeyEip1193ProviderParameters = {
  /** The chains the provider serves; the first is the initial one unless `chainId` says otherwise. */
  chains: readonly Chain[]
  /** JSON-RPC URL per chain id. @default each chain's `rpcUrls.default.http[0]` */
  rpcUrls?: Record<number, string> | undefined
  /** Initial chain id. @default the first chain's */
  chainId?: number | undefined
  /**
   * Called by `eth_requestAccounts` when nobody is signed in; resolve once signed in (e.g.
   * `() => authModal.open()`). Without it, or when it rejects, the request fails with 4001.
   */
  signIn?: (() => Promise<unknown>) | undefined
  /** Organization that holds the accounts. @default the session's organization */
  organizationId?: string | undefined
  /**
   * Every `wallet_sendCalls` batch is paid by the organization's gas sponsor. Without it an app
   * asks per batch with the `gasSponsorship` capability. `wallet_getCapabilities` reports what the
   * service does per chain (this only while signed out, when it cannot ask).
   * @default false
   */
  sponsor?: boolean | undefined
  /**
   * Shows a batch's status for `wallet_showCallsStatus` (e.g. opens `<SendTransaction/>` on it).
   * Without it that method fails with 4200.
   */
  showCallsStatus?: ((id: string) => void | Promise<void>) | undefined
}

export type LatchkeyEip1193Event = 'connect' | 'disconnect' | 'accountsChanged' | 'chainChanged' | 'message'

/**
 * An EIP-1193 provider over the kit's active session.
 *
 * For connectors built on it (latchkey/wagmi): `eth_accounts` never prompts and answers `[]`
 * while signed out; `eth_requestAccounts` calls `signIn` when signed out; `accountsChanged`
 * fires when the usable active session changes (sign-in, switch, sign-out, expiry: `[]`, followed
 * by `disconnect` with a 4900 error); `chainChanged` fires on `wallet_switchEthereumChain`;
 * `refreshAccounts()` re-reads the accounts after a wallet was created; `destroy()` stops
 * following the session store. EIP-5792 (`wallet_getCapabilities`, `wallet_sendCalls`,
 * `wallet_getCallsStatus`, `wallet_showCallsStatus`) sends batches through the service's
 * `eth_send_transaction`: atomic, optionally sponsored.
 */
export interface LatchkeyEip1193Provider {
  request(args: { method: string; params?: unknown }): Promise<unknown>
  on(event: LatchkeyEip1193Event, listener: (...args: never[]) => void): LatchkeyEip1193Provider
  removeListener(event: LatchkeyEip1193Event, listener: (...args: never[]) => void): LatchkeyEip1193Provider
  /** Re-reads the session's Ethereum accounts, emitting `accountsChanged` when they changed. */
  refreshAccounts(): Promise<Address[]>
  /** Stops following the session store. */
  destroy(): void
}

const usableSession = (state: SessionState): Session | undefined => {
  const session = state.activeId ? state.sessions[state.activeId] : undefined
  return session && isUsable(session.status) ? session : undefined
}

type RpcTransaction = Partial<Record<string, unknown>> & { from?: string }

const TYPES: Record<string, TransactionRequest['type']> = {
  '0x0': 'legacy',
  '0x1': 'eip2930',
  '0x2': 'eip1559',
  '0x4': 'eip7702',
}

/**
 * A transaction quantity: a 0x-hex string, a safe non-negative integer or a bigint. A string without
 * 0x ("10") is none: JSON-RPC knows only 0x-hex, and MetaMask adds the 0x (0x10 = 16) where reading
 * it as decimal would sign another value, nonce or gas than the page gets from MetaMask.
 */
function quantityOf(value: unknown, max = 2n ** 256n - 1n): bigint | undefined {
  let parsed: bigint | undefined
  if (typeof value === 'bigint') parsed = value
  else if (typeof value === 'number') parsed = Number.isSafeInteger(value) ? BigInt(value) : undefined
  else if (typeof value === 'string' && /^0x[0-9a-fA-F]+$/.test(value)) parsed = BigInt(value)
  return parsed !== undefined && parsed >= 0n && parsed <= max ? parsed : undefined
}

/**
 * A typed-data domain's or a transaction's `chainId` (a number, or a decimal or 0x-hex string), else
 * undefined. Decimal stays: MetaMask reads a domain's decimal `chainId` as decimal, and a
 * transaction's only picks the chain to refuse, never what is signed (that is the provider's chain).
 */
function chainIdOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : undefined
  if (typeof value === 'bigint') return Number(value)
  if (typeof value !== 'string' || !/^(0x[0-9a-fA-F]+|[0-9]+)$/.test(value)) return undefined
  const parsed = Number(value)
  return Number.isSafeInteger(parsed) ? parsed : undefined
}

/**
 * A JSON-RPC transaction object as a viem request. Its quantities may be 0x-hex strings, numbers or
 * bigints; one present that is none of these (a decimal string too) is refused (-32602), never
 * guessed, nor dropped for the node to fill in (a value of 0, the next nonce instead of the one to
 * replace).
 */
function fromRpcTransaction(tx: RpcTransaction): TransactionRequest {
  const big = (key: string, max?: bigint) => {
    if (tx[key] === undefined || tx[key] === null) return undefined
    const parsed = quantityOf(tx[key], max)
    if (parsed === undefined)
      throw new InvalidParamsRpcError(
        new Error(
          `the transaction's ${key} must be a non-negative integer (a 0x-hex string or a safe integer), got ${String(tx[key]).slice(0, 80)}`,
        ),
      )
    return parsed
  }
  const gas = big('gas')
  const gasLimit = big('gasLimit')
  if (gas !== undefined && gasLimit !== undefined && gas !== gasLimit)
    throw new InvalidParamsRpcError(
      new Error(`the transaction's gas (${gas}) and gasLimit (${gasLimit}) differ`),
    )
  const nonce = big('nonce', BigInt(Number.MAX_SAFE_INTEGER))
  const request: Record<string, unknown> = {
    to: tx.to ?? undefined,
    data: tx.data ?? tx.input,
    value: big('value'),
    gas: gas ?? gasLimit,
    gasPrice: big('gasPrice'),
    maxFeePerGas: big('maxFeePerGas'),
    maxPriorityFeePerGas: big('maxPriorityFeePerGas'),
    nonce: nonce === undefined ? undefined : Number(nonce),
    accessList: tx.accessList,
    type: typeof tx.type === 'string' ? TYPES[tx.type] : undefined,
  }
  if (Array.isArray(tx.authorizationList))
    request.authorizationList = (tx.authorizationList as Record<string, Hex>[]).map((a) => ({
      address: a.address,
      chainId: hexToNumber(a.chainId as Hex),
      nonce: hexToNumber(a.nonce as Hex),
      r: a.r,
      s: a.s,
      yParity: hexToNumber((a.yParity ?? '0x0') as Hex),
    }))
  for (const key of Object.keys(request)) if (request[key] === undefined) delete request[key]
  return request as TransactionRequest
}

/** Creates the provider. Its signatures are activities of the active session. */
export function createLatchkeyEip1193Provider(
  client: Latchkey,
  parameters: CreateLatchkeyEip1193ProviderParameters,
): LatchkeyEip1193Provider {
  const { chains, rpcUrls = {}, signIn, organizationId } = parameters
  if (chains.length === 0) throw new TypeError('createLatchkeyEip1193Provider: give at least one chain')
  let chain = chains.find((c) => c.id === parameters.chainId) ?? (chains[0] as Chain)
  const listeners = new Map<LatchkeyEip1193Event, Set<(...args: never[]) => void>>()
  const emit = (event: LatchkeyEip1193Event, value: unknown) => {
    for (const listener of listeners.get(event) ?? []) (listener as (value: unknown) => void)(value)
  }

  const rpcUrl = (target: Chain) => {
    const url = rpcUrls[target.id] ?? target.rpcUrls.default.http[0]
    if (!url) throw new ProviderDisconnectedError(new Error(`no JSON-RPC URL for chain ${target.id}`))
    return url
  }

  // Accounts of the usable active session, read once per session.
  let accounts: { sessionId: string; addresses: Promise<Address[]> } | undefined
  let emitted: Address[] = []
  const readAccounts = async (session: Session): Promise<Address[]> => {
    const { accounts: rows } = await getWalletAccounts(client, {
      paginationOptions: { limit: '100' },
      organizationId,
      sessionId: session.id,
    })
    return rows.filter((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM').map((a) => getAddress(a.address))
  }
  const currentAccounts = async (): Promise<Address[]> => {
    await client.hydrate()
    const session = usableSession(client.store.getState())
    if (!session) return []
    if (accounts?.sessionId !== session.id)
      accounts = { sessionId: session.id, addresses: readAccounts(session) }
    // A session without an Ethereum account is not cached: a wallet may be created next.
    const pending = accounts
    const forget = () => {
      if (accounts === pending) accounts = undefined
    }
    return pending.addresses.then(
      (found) => {
        if (found.length === 0) forget()
        return found
      },
      (error) => {
        forget()
        throw error
      },
    )
  }
  const announce = (next: Address[]) => {
    const same = next.length === emitted.length && next.every((a, i) => a === emitted[i])
    emitted = next
    if (!same) emit('accountsChanged', next)
  }

  const unsubscribe = client.store.subscribe((state, previous) => {
    const session = usableSession(state)
    const before = usableSession(previous)
    if (session?.id === before?.id) return
    if (!session) {
      accounts = undefined
      announce([])
      emit('disconnect', new ProviderDisconnectedError(new Error('Signed out of Latchkey')))
      return
    }
    if (!before) emit('connect', { chainId: numberToHex(chain.id) })
    currentAccounts().then(announce, () => announce([]))
  })

  /** The account to sign with: it must belong to the signed-in user (4100 otherwise, 4001 when signed out). */
  const signer = async (from: unknown): Promise<LatchkeyAccount> => {
    const available = await currentAccounts()
    if (available.length === 0)
      throw new UserRejectedRequestError(
        new Error('Not signed in to Latchkey, or the user has no Ethereum account'),
      )
    const address =
      typeof from === 'string' ? available.find((a) => isAddressEqual(a, from as Address)) : available[0]
    if (!address)
      throw new UnauthorizedProviderError(new Error(`${String(from)} is not an account of this user`))
    return toLatchkeyAccount(client, { address, organizationId })
  }

  /**
   * Fills in what the request leaves out (nonce, fees, gas, chain id) on `target`'s RPC, as a
   * viem wallet client's `sendTransaction` does for a local account, and signs it with `account`.
   * A bare client and the two actions it needs: a wallet client would bring every wallet action.
   */
  async function signRequest(account: LatchkeyAccount, request: TransactionRequest, target: Chain) {
    const rpc = createClient({ account, chain: target, transport: http(rpcUrl(target)) })
    // A type-4 transaction without `to` calls its first authorization's signer, as viem's sendTransaction does.
    const to =
      request.to ??
      (request.authorizationList?.[0]
        ? await recoverAuthorizationAddress({ authorization: request.authorizationList[0] })
        : undefined)
    const prepared = await prepareTransactionRequest(rpc, { ...request, to, account, chain: target } as never)
    const signed = await account.signTransaction(prepared as never, {
      serializer: target.serializers?.transaction,
    })
    return { rpc, signed }
  }

  async function forward(method: string, params: unknown, target: Chain): Promise<unknown> {
    const response = await fetch(rpcUrl(target), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: params ?? [] }),
    }).catch((error: Error) => {
      throw new ProviderDisconnectedError(error)
    })
    const body = (await response.json()) as { result?: unknown; error?: { code: number; message: string } }
    if (body.error)
      throw new RpcError(new Error(body.error.message), {
        code: body.error.code,
        shortMessage: body.error.message,
      })
    return body.result
  }

  const eip5792 = createEip5792({
    client,
    chains,
    organizationId,
    sponsor: parameters.sponsor ?? false,
    account: signer,
    rpc: (target, method, params) => forward(method, params, target),
    showCallsStatus: parameters.showCallsStatus,
  })

  const param = <T>(params: unknown, index: number): T => {
    const value = Array.isArray(params) ? params[index] : undefined
    if (value === undefined) throw new InvalidParamsRpcError(new Error(`missing parameter ${index}`))
    return value as T
  }

  async function handle(method: string, params: unknown): Promise<unknown> {
    // The chain the app was on when it asked: a request is checked against it and runs on it to the
    // end, though a `wallet_switchEthereumChain` (wagmi's switchChain, a network picker) lands while
    // it awaits the session's accounts or the node (it would have signed and sent for the new one).
    const target = chain
    switch (method) {
      case 'eth_chainId':
        return numberToHex(target.id)
      case 'net_version':
        return String(target.id)
      case 'eth_accounts':
        return currentAccounts().catch(() => [])
      case 'eth_requestAccounts': {
        let found = await currentAccounts().catch(() => [])
        if (found.length === 0 && signIn && !usableSession(client.store.getState())) {
          await signIn()
          found = await currentAccounts()
        }
        if (found.length === 0)
          throw new UserRejectedRequestError(new Error('Not signed in to Latchkey, or no Ethereum account'))
        announce(found)
        return found
      }
      case 'personal_sign': {
        const account = await signer(param(params, 1))
        const message = param<string>(params, 0)
        // 0x-hex is the message's bytes; other text is signed as its UTF-8, as MetaMask does.
        return account.signMessage({
          message: /^0x(?:[0-9a-fA-F]{2})*$/.test(message) ? { raw: message as Hex } : message,
        })
      }
      case 'eth_sign':
        // A raw hash carries no chain: a page would get the mainnet Permit, the other chain's
        // transaction or the chain-0 EIP-7702 authorization the checks below refuse, by hashing it
        // itself. Refused, as MetaMask does by default; not sent on to the RPC either.
        throw new UnsupportedProviderMethodError(
          new Error(
            'eth_sign is not supported by Latchkey: it signs any hash, past the chain checks. Use personal_sign or eth_signTypedData_v4; an app that really needs a raw hash signs it with toLatchkeyAccount(client, { address }).sign({ hash }) from latchkey/viem',
          ),
        )
      case 'eth_signTypedData_v4': {
        const account = await signer(param(params, 0))
        const raw = param<string | Record<string, unknown>>(params, 1)
        const typedData = typeof raw === 'string' ? JSON.parse(raw) : raw
        // A domain naming another chain is refused, as MetaMask refuses it ("Provided chainId must
        // match the active chainId"): the app asked for a signature it means for that chain.
        const domainChainId = (typedData as { domain?: { chainId?: unknown } })?.domain?.chainId
        if (domainChainId !== undefined && domainChainId !== null) {
          const named = chainIdOf(domainChainId)
          if (named !== target.id)
            throw new InvalidParamsRpcError(
              new Error(
                `the typed data's domain names chain ${named ?? String(domainChainId)}; the wallet is on chain ${target.id}`,
              ),
            )
        }
        return account.signTypedData(typedData)
      }
      case 'eth_signTransaction':
      case 'eth_sendTransaction': {
        const tx = param<RpcTransaction>(params, 0)
        // A request for another chain is refused, not signed for this one (as wallets do): the
        // same contract address may do something else here.
        // Dapps send it as hex, but also as a number or a decimal string (MetaMask takes each).
        const named = tx.chainId === undefined || tx.chainId === null ? undefined : chainIdOf(tx.chainId)
        if (tx.chainId !== undefined && tx.chainId !== null && named !== target.id)
          throw new InvalidParamsRpcError(
            new Error(
              `the transaction names chain ${named ?? String(tx.chainId)}; the wallet is on chain ${target.id}`,
            ),
          )
        const request = fromRpcTransaction(tx)
        const account = await signer(tx.from)
        const { rpc, signed } = await signRequest(account, request, target)
        if (method === 'eth_signTransaction') return signed
        return sendRawTransaction(rpc, { serializedTransaction: signed })
      }
      case 'wallet_switchEthereumChain': {
        const { chainId } = param<{ chainId: Hex }>(params, 0)
        const next = chains.find((c) => c.id === Number(chainId))
        if (!next) throw new SwitchChainError(new Error(`Chain ${chainId} is not configured`))
        if (next.id !== chain.id) {
          chain = next
          emit('chainChanged', numberToHex(next.id))
        }
        return null
      }
      case 'wallet_getCapabilities':
        return eip5792.getCapabilities(params)
      case 'wallet_sendCalls':
        return eip5792.send(params, target)
      case 'wallet_getCallsStatus':
        return eip5792.status(params)
      case 'wallet_showCallsStatus':
        return eip5792.show(params)
      case 'wallet_addEthereumChain':
      case 'wallet_watchAsset':
      case 'wallet_requestPermissions':
      case 'wallet_getPermissions':
      case 'eth_subscribe':
        throw new UnsupportedProviderMethodError(new Error(`${method} is not supported by Latchkey`))
      default:
        return forward(method, params, target)
    }
  }

  const provider: LatchkeyEip1193Provider = {
    async request({ method, params }) {
      try {
        return await handle(method, params)
      } catch (error) {
        if (error instanceof RpcError) throw error
        // The kit's own refusals: a missing or ended session or a cancel is the user's "no".
        const walked = (error as { walk?: (fn: (e: unknown) => boolean) => unknown }).walk?.(
          (e) => e instanceof LatchkeyError,
        )
        const kit = error instanceof LatchkeyError ? error : (walked as LatchkeyError | null | undefined)
        if (kit && ['NOT_SIGNED_IN', 'SESSION_EXPIRED', 'USER_CANCELLED'].includes(kit.code))
          throw new UserRejectedRequestError(error as Error)
        // A request the service refused for what it carries (a field it names): invalid params.
        if (kit && (kit.code === 'FIELD_INVALID' || (kit.status === 400 && kit.field !== undefined)))
          throw new InvalidParamsRpcError(error as Error)
        throw error
      }
    },
    on(event, listener) {
      const set = listeners.get(event) ?? new Set()
      listeners.set(event, set)
      set.add(listener)
      return provider
    },
    removeListener(event, listener) {
      listeners.get(event)?.delete(listener)
      return provider
    },
    async refreshAccounts() {
      accounts = undefined
      const next = await currentAccounts()
      announce(next)
      return next
    },
    destroy: unsubscribe,
  }
  return provider
}
