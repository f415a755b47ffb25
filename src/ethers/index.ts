/**
 * `latchkey/ethers`: an ethers v6 signer for an Ethereum account of a Latchkey wallet. The key
 * stays in the service; each signature is an activity of the active session (or `sessionId`).
 * `sendTransaction` comes from `AbstractSigner` once the signer has a provider.
 */
import {
  AbstractSigner,
  copyRequest,
  getAddress,
  type Provider,
  resolveAddress,
  resolveProperties,
  Transaction,
  type TransactionLike,
  type TransactionRequest,
  type TypedDataDomain,
  TypedDataEncoder,
  type TypedDataField,
} from 'ethers'
import { signMessage } from '../core/actions/activities/signMessage.ts'
import { signTransaction } from '../core/actions/activities/signTransaction.ts'
import { signTypedData, type TypedData } from '../core/actions/activities/signTypedData.ts'
import type { Latchkey } from '../core/createLatchkey.ts'

export type LatchkeySignerParameters = {
  /** The Ethereum address of a wallet account of the signed-in user. */
  address: string
  /** Organization that holds the account. @default the session's organization */
  organizationId?: string | undefined
  /** Sign with this session instead of the active one. */
  sessionId?: string | undefined
}

/** `new LatchkeySigner(client, { address }, provider?)`: an ethers `Signer` backed by the service. */
export class LatchkeySigner extends AbstractSigner {
  readonly client: Latchkey
  readonly address: string
  readonly #options: { organizationId?: string | undefined; sessionId?: string | undefined }

  constructor(client: Latchkey, parameters: LatchkeySignerParameters, provider?: Provider | null) {
    super(provider)
    this.client = client
    this.address = getAddress(parameters.address)
    this.#options = { organizationId: parameters.organizationId, sessionId: parameters.sessionId }
  }

  override async getAddress(): Promise<string> {
    return this.address
  }

  override connect(provider: Provider | null): LatchkeySigner {
    return new LatchkeySigner(this.client, { address: this.address, ...this.#options }, provider)
  }

  override async signTransaction(request: TransactionRequest): Promise<string> {
    // A plain copy: AbstractSigner.sendTransaction passes a Transaction, whose fields are getters.
    const tx = copyRequest(request)
    const { to, from } = await resolveProperties({
      to: tx.to ? resolveAddress(tx.to, this.provider) : undefined,
      from: tx.from ? resolveAddress(tx.from, this.provider) : undefined,
    })
    if (from != null && getAddress(from) !== this.address)
      throw new Error(`transaction from ${from} cannot be signed by ${this.address}`)
    if (to != null) tx.to = to
    delete tx.from
    const unsigned = Transaction.from(tx as TransactionLike<string>)
    const { signedTransaction } = await signTransaction(this.client, {
      signWith: this.address,
      type: 'TRANSACTION_TYPE_ETHEREUM',
      unsignedTransaction: unsigned.unsignedSerialized,
      ...this.#options,
    })
    return `0x${signedTransaction.replace(/^0x/, '')}`
  }

  override async signMessage(message: string | Uint8Array): Promise<string> {
    const signed = await signMessage(this.client, {
      signWith: this.address,
      message,
      kind: 'ethereum',
      ...this.#options,
    })
    return signed.signature
  }

  override async signTypedData(
    domain: TypedDataDomain,
    types: Record<string, TypedDataField[]>,
    value: Record<string, unknown>,
  ): Promise<string> {
    const provider = this.provider
    const resolved = await TypedDataEncoder.resolveNames(domain, types, value, async (name) => {
      if (!provider) throw new Error(`cannot resolve ENS name ${name} without a provider`)
      return (await provider.resolveName(name)) ?? name
    })
    const typedData = TypedDataEncoder.getPayload(resolved.domain, types, resolved.value) as TypedData
    const signed = await signTypedData(this.client, { signWith: this.address, typedData, ...this.#options })
    return signed.signature
  }
}
