import {
  type Address,
  fromRlp,
  getTypesForEIP712Domain,
  type Hex,
  hexToNumber,
  isAddress,
  type LocalAccount,
  type SerializeTransactionFn,
  serializeSignature,
  serializeTransaction,
  type TransactionSerializable,
  toPrefixedMessage,
} from 'viem'
import { toAccount } from 'viem/accounts'
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

type RawSignature = { r: string; s: string; v: string }

const signatureOf = ({ r, s, v }: RawSignature) => ({
  r: `0x${r}` as Hex,
  s: `0x${s}` as Hex,
  yParity: Number.parseInt(v, 16),
})

/**
 * The signature of a signed transaction: its last three RLP fields (yParity or v, r, s) after
 * the EIP-2718 type byte, if any. For a custom serializer to place.
 */
function signatureOfSigned(signed: Hex) {
  const typed = Number.parseInt(signed.slice(2, 4), 16) < 0x80
  const fields = fromRlp(typed ? `0x${signed.slice(4)}` : signed) as Hex[]
  const [last, r, s] = fields.slice(-3) as [Hex, Hex, Hex]
  const number = last === '0x' ? 0 : hexToNumber(last)
  if (typed) return { r, s, yParity: number }
  const yParity = number >= 35 ? (number - 35) % 2 : number - 27
  return { r, s, yParity, v: BigInt(number) }
}

type Types = Record<string, { name: string; type: string }[] | undefined>

/**
 * `value` as EIP-712 encodes it as a `type`: a struct's declared fields only (those present), an
 * array's items each; anything else as it is, for the service to check.
 */
function declared(types: Types, type: string, value: unknown): unknown {
  const fields = Object.hasOwn(types, type) ? types[type] : undefined
  if (Array.isArray(fields) && value && typeof value === 'object' && !Array.isArray(value)) {
    const object = value as Record<string, unknown>
    return Object.fromEntries(
      fields
        .filter(({ name }) => Object.hasOwn(object, name))
        .map(({ name, type }) => [name, declared(types, type, object[name])]),
    )
  }
  const item = /^(.+)\[\d*\]$/.exec(type)?.[1]
  return !fields && item && Array.isArray(value) ? value.map((entry) => declared(types, item, entry)) : value
}

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
      return serializeSignature(signatureOf(signatures[0] as RawSignature))
    },
    // EIP-191: the service hashes the prefixed message itself, so it (and its policies) see it.
    async signMessage({ message }) {
      const { signatures } = await viemErrors(() =>
        signRawPayloads(client, {
          signWith: address,
          payloads: [toPrefixedMessage(message)],
          encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
          hashFunction: 'HASH_FUNCTION_KECCAK256',
          ...options,
        }),
      )
      return serializeSignature(signatureOf(signatures[0] as RawSignature))
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
      const EIP712Domain = types.EIP712Domain ?? getTypesForEIP712Domain({ domain })
      const all = { ...types, EIP712Domain }
      // Only what the types declare is signed (as viem and eth-sig-util encode it), and only that
      // goes to the service, whose encoder refuses the rest: its policies see what is signed.
      const present =
        domain && typeof domain === 'object'
          ? Object.fromEntries(Object.entries(domain).filter(([, value]) => value != null))
          : domain
      const signed = await viemErrors(() =>
        signTypedData(client, {
          signWith: address,
          typedData: {
            types: all,
            primaryType,
            domain: declared(all, 'EIP712Domain', present) as Record<string, unknown>,
            message: declared(all, primaryType, message ?? {}) as Record<string, unknown>,
          },
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
      return serialize(transaction as TransactionSerializable, signatureOfSigned(signed))
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
      const signature = signatureOf(signatures[0] as RawSignature)
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
