import {
  type Address,
  type Hex,
  hexToBytes,
  isAddress,
  type LocalAccount,
  parseTransaction,
  type SerializeTransactionFn,
  type SignableMessage,
  serializeSignature,
  serializeTransaction,
  stringToBytes,
  type TransactionSerializable,
} from 'viem'
import { toAccount } from 'viem/accounts'
import { signMessage } from '../core/actions/activities/signMessage.ts'
import { signRawPayloads } from '../core/actions/activities/signRawPayloads.ts'
import { signTransaction } from '../core/actions/activities/signTransaction.ts'
import { signTypedData } from '../core/actions/activities/signTypedData.ts'
import type { Latchkey } from '../core/createLatchkey.ts'
import { viemErrors } from './errors.ts'

export type ToLatchkeyAccountParameters = {
  /** The Ethereum address of a wallet account of the signed-in user. */
  address: Address
  /** Organization that holds the account. @default the session's organization */
  organizationId?: string | undefined
  /** Sign with this session instead of the active one. */
  sessionId?: string | undefined
}

export type LatchkeyAccount = LocalAccount<'latchkey'>

const toBytes = (message: SignableMessage): Uint8Array =>
  typeof message === 'string'
    ? stringToBytes(message)
    : typeof message.raw === 'string'
      ? hexToBytes(message.raw)
      : message.raw

const signatureOf = ({ r, s, v }: { r: string; s: string; v: string }) => ({
  r: `0x${r}` as Hex,
  s: `0x${s}` as Hex,
  yParity: Number.parseInt(v, 16),
})

/** EIP-712 domain fields in their canonical order, with the types viem would give them. */
const DOMAIN_FIELDS = [
  ['name', 'string'],
  ['version', 'string'],
  ['chainId', 'uint256'],
  ['verifyingContract', 'address'],
  ['salt', 'bytes32'],
] as const

/**
 * A viem `LocalAccount` whose key stays in the Latchkey service: every signature is an activity of
 * the signed-in user (the active session, or `sessionId`). Use it as any viem account:
 * `createWalletClient({ account, chain, transport })`. Errors are viem `BaseError`s;
 * an activity that needs more approvals throws `LatchkeyConsensusNeededError` with its id.
 */
export function toLatchkeyAccount(
  client: Latchkey,
  parameters: ToLatchkeyAccountParameters,
): LatchkeyAccount {
  const { address, organizationId, sessionId } = parameters
  if (!isAddress(address, { strict: false }))
    throw new TypeError(`toLatchkeyAccount: ${String(address)} is not an Ethereum address`)
  const options = { organizationId, sessionId }

  const account = toAccount({
    address,
    async sign({ hash }) {
      const { signatures } = await viemErrors(() =>
        signRawPayloads(client, {
          signWith: address,
          payloads: [hash],
          encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
          hashFunction: 'HASH_FUNCTION_NO_OP',
          ...options,
        }),
      )
      return serializeSignature(signatureOf(signatures[0] as { r: string; s: string; v: string }))
    },
    async signMessage({ message }) {
      const signed = await viemErrors(() =>
        signMessage(client, { signWith: address, message: toBytes(message), kind: 'ethereum', ...options }),
      )
      return signed.signature as Hex
    },
    async signTypedData(typedData) {
      const {
        domain = {},
        types,
        primaryType,
        message,
      } = typedData as {
        domain?: Record<string, unknown>
        types: Record<string, { name: string; type: string }[]>
        primaryType: string
        message: Record<string, unknown>
      }
      const EIP712Domain =
        types.EIP712Domain ??
        DOMAIN_FIELDS.filter(([name]) => domain[name] !== undefined).map(([name, type]) => ({ name, type }))
      const signed = await viemErrors(() =>
        signTypedData(client, {
          signWith: address,
          typedData: { types: { ...types, EIP712Domain }, primaryType, domain, message: message ?? {} },
          ...options,
        }),
      )
      return signed.signature as Hex
    },
    async signTransaction(transaction, { serializer } = {}) {
      const serialize = (serializer ??
        serializeTransaction) as SerializeTransactionFn<TransactionSerializable>
      const unsigned = await serialize(transaction as TransactionSerializable)
      const { signedTransaction } = await viemErrors(() =>
        signTransaction(client, {
          signWith: address,
          type: 'TRANSACTION_TYPE_ETHEREUM',
          unsignedTransaction: unsigned,
          ...options,
        }),
      )
      const signed = `0x${signedTransaction.replace(/^0x/, '')}` as Hex
      if (!serializer) return signed
      // A custom serializer gets the service's signature to place as it serialises.
      const { r, s, v, yParity } = parseTransaction(signed)
      const signature = { r: r as Hex, s: s as Hex, yParity: yParity ?? 0, ...(v === undefined ? {} : { v }) }
      return serialize(transaction as TransactionSerializable, signature)
    },
    async signAuthorization(authorization) {
      const contract = (authorization.address ?? authorization.contractAddress) as Address
      const payload = JSON.stringify({
        chainId: authorization.chainId,
        address: contract,
        nonce: authorization.nonce,
      })
      const { signatures } = await viemErrors(() =>
        signRawPayloads(client, {
          signWith: address,
          payloads: [payload],
          encoding: 'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION',
          hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
          ...options,
        }),
      )
      const signature = signatureOf(signatures[0] as { r: string; s: string; v: string })
      return {
        address: contract,
        chainId: authorization.chainId,
        nonce: authorization.nonce,
        ...signature,
        v: BigInt(27 + signature.yParity),
      }
    },
  })
  // The public key is not known without a query; viem only uses it for display.
  return { ...account, source: 'latchkey', publicKey: '0x' } as LatchkeyAccount
}
