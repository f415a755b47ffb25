import type { AddressFormat, Curve } from '@latchkey/protocol'
import { base58 } from '@scure/base'
import { LatchkeyError, thenOrResume } from '../../errors.ts'
import type { Latchkey } from '../../types.ts'
import { bytesToHex, concatBytes, hexToBytes, toBase64, utf8ToBytes } from '../../utils/encoding.ts'
import { solanaMessageRefusal } from '../../utils/solanaMessageRefusal.ts'
import type { ActionOptions } from '../options.ts'
import { getWalletAccounts } from '../queries/getWalletAccounts.ts'
import { signRawPayloads } from './signRawPayloads.ts'

export type SignMessageParameters = {
  /** Address of the wallet account that signs. */
  signWith: string
  /** Text (signed as UTF-8) or bytes. */
  message: string | Uint8Array
  /**
   * The account's curve, to skip looking the account up: `ethereum` signs EIP-191 `personal_sign`
   * with any secp256k1 key; `ed25519` with a Solana (base58) address signs a Solana message. Any
   * other account is looked up and signs its chain's message format (see `format` of the result);
   * a `kind` that is not the account's curve is refused. @default from the account (`0x` addresses: ethereum)
   */
  kind?: 'ethereum' | 'ed25519' | 'secp256k1' | undefined
} & ActionOptions

/**
 * How the message was signed, hence how to verify it: `eip191` (Ethereum `personal_sign`), `solana`
 * (ed25519 over the message itself; a compiled transaction message, any 32 bytes and an Aptos
 * signing message are refused), `adr036` (Cosmos
 * and Sei: Keplr's `signArbitrary`), `tron` (TronWeb's `signMessageV2`), `bip137` (Bitcoin and
 * Dogecoin "Signed Message").
 */
export type MessageFormat = 'eip191' | 'solana' | 'adr036' | 'tron' | 'bip137'

export type SignMessageReturnType = {
  r: string
  s: string
  v: string
  /** `eip191` and `tron`: `0x` r‖s‖(27+v), as `personal_sign` and TronWeb return; others: r‖s hex. */
  signature: string
  /**
   * ed25519 (Solana): the same 64-byte signature in base58, the form Solana tools (web3.js,
   * wallet adapters, explorers) expect. Absent for other kinds.
   */
  signatureBase58?: string
  /**
   * `adr036`: r‖s in base64, the `signature` of Keplr's `StdSignature`; `bip137`: the 65-byte
   * header‖r‖s in base64, as Bitcoin wallets show and verify it. Absent for other formats.
   */
  signatureBase64?: string
  /** The message format signed (absent in results of clients before it). */
  format?: MessageFormat
}

const isEthereumAddress = (value: string) => /^0x[0-9a-fA-F]{40}$/.test(value)

/** The 32-byte public key of a Solana (base58) address, or undefined. */
function solanaKeyOf(address: string): Uint8Array | undefined {
  try {
    const key = base58.decode(address)
    return key.length === 32 ? key : undefined
  } catch {
    return undefined
  }
}

/** The message format of an account's chain, or undefined when the kit signs no messages for it. */
function formatOf(curve: Curve, addressFormat: AddressFormat): MessageFormat | undefined {
  if (curve === 'CURVE_ED25519') return addressFormat === 'ADDRESS_FORMAT_SOLANA' ? 'solana' : undefined
  if (curve !== 'CURVE_SECP256K1') return undefined
  if (addressFormat === 'ADDRESS_FORMAT_ETHEREUM') return 'eip191'
  if (addressFormat === 'ADDRESS_FORMAT_COSMOS' || addressFormat === 'ADDRESS_FORMAT_SEI') return 'adr036'
  if (addressFormat === 'ADDRESS_FORMAT_TRON') return 'tron'
  if (/^ADDRESS_FORMAT_(BITCOIN_[A-Z]+_(P2PKH|P2WPKH)|DOGE_[A-Z]+)$/.test(addressFormat)) return 'bip137'
  return undefined
}

async function formatFor(
  client: Latchkey,
  parameters: SignMessageParameters,
): Promise<{ format: MessageFormat; addressFormat?: AddressFormat }> {
  const { kind, signWith } = parameters
  if (kind === 'ethereum' || (!kind && isEthereumAddress(signWith))) return { format: 'eip191' }
  if (kind === 'ed25519' && solanaKeyOf(signWith)) return { format: 'solana' }
  const { accounts } = await getWalletAccounts(client, {
    paginationOptions: { limit: '100' },
    organizationId: parameters.organizationId,
    sessionId: parameters.sessionId,
    signal: parameters.signal,
  })
  const account = accounts.find((a) => a.address === signWith)
  if (!account)
    throw new LatchkeyError(`No wallet account ${signWith}`, {
      code: 'WALLET_ACCOUNT_NOT_FOUND',
      details: { field: 'signWith' },
    })
  const { curve, addressFormat } = account
  if (kind && curve !== (kind === 'ed25519' ? 'CURVE_ED25519' : 'CURVE_SECP256K1'))
    throw new LatchkeyError(`${signWith} is a ${curve} account, not ${kind}`, {
      code: 'FIELD_INVALID',
      details: { field: 'kind', rule: 'KIND_NOT_THE_ACCOUNTS' },
    })
  const format = formatOf(curve, addressFormat)
  // Raw ed25519 or SHA-256 signatures of chosen bytes are what Sui, Aptos, Stellar, TON, XRP (and
  // Cosmos amino, Tron, Bitcoin before their formats) accept for transactions: no such "message".
  if (!format)
    throw new LatchkeyError(
      `signMessage has no message format for ${addressFormat} accounts, and signing raw bytes could sign a transaction; sign transactions with signTransaction`,
      { code: 'FIELD_INVALID', details: { field: 'signWith', rule: 'NO_MESSAGE_FORMAT', addressFormat } },
    )
  return { format, addressFormat }
}

/** Bitcoin's CompactSize length. */
const varint = (n: number) =>
  n < 0xfd
    ? new Uint8Array([n])
    : n <= 0xffff
      ? new Uint8Array([0xfd, n & 0xff, n >> 8])
      : new Uint8Array([0xfe, n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, n >>> 24])

/** Cosmos ADR-036: the amino StdSignDoc of one `sign/MsgSignData` (keys sorted, as Keplr signs it). */
export const adr036SignDoc = (signer: string, data: Uint8Array) =>
  `{"account_number":"0","chain_id":"","fee":{"amount":[],"gas":"0"},"memo":"","msgs":[{"type":"sign/MsgSignData","value":{"data":"${toBase64(data)}","signer":"${signer}"}}],"sequence":"0"}`

/** What goes to `sign_raw_payloads` for `format`, and the hash the service applies to it. */
async function payloadOf(format: MessageFormat, signWith: string, bytes: Uint8Array, addressFormat?: string) {
  switch (format) {
    case 'eip191':
      return {
        payload: concatBytes(utf8ToBytes(`\x19Ethereum Signed Message:\n${bytes.length}`), bytes),
        hashFunction: 'HASH_FUNCTION_KECCAK256' as const,
      }
    case 'tron':
      return {
        payload: concatBytes(utf8ToBytes(`\x19TRON Signed Message:\n${bytes.length}`), bytes),
        hashFunction: 'HASH_FUNCTION_KECCAK256' as const,
      }
    case 'adr036':
      return {
        payload: utf8ToBytes(adr036SignDoc(signWith, bytes)),
        hashFunction: 'HASH_FUNCTION_SHA256' as const,
      }
    case 'bip137': {
      const magic = addressFormat?.startsWith('ADDRESS_FORMAT_DOGE')
        ? '\x19Dogecoin Signed Message:\n'
        : '\x18Bitcoin Signed Message:\n'
      // Double SHA-256: the first here (WebCrypto), the second by the service.
      const data = concatBytes(utf8ToBytes(magic), varint(bytes.length), bytes)
      const first = new Uint8Array(await crypto.subtle.digest('SHA-256', data as Uint8Array<ArrayBuffer>))
      return { payload: first, hashFunction: 'HASH_FUNCTION_SHA256' as const }
    }
    case 'solana': {
      // Raw ed25519 over the message: refused when the bytes are a transaction of Solana or of
      // another ed25519 chain the same key may be an account of (see solanaMessageRefusal).
      const refusal = solanaMessageRefusal(bytes, solanaKeyOf(signWith) ?? new Uint8Array())
      if (refusal)
        throw new LatchkeyError(`The message ${refusal.reason}`, {
          code: 'FIELD_INVALID',
          details: { field: 'message', rule: refusal.rule },
        })
      return { payload: bytes, hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE' as const }
    }
  }
}

/**
 * Signs a message in the format of the account's chain (`format` of the result): EIP-191 for
 * Ethereum, the message itself for Solana (refusing compiled transaction messages, and what Sui,
 * Stellar, TON or Aptos transactions of the same key sign: 32 bytes, Aptos-salted bytes), ADR-036 for
 * Cosmos and Sei, TronWeb's `signMessageV2` for Tron, "Signed Message" (BIP-137) for Bitcoin
 * P2PKH/P2WPKH and Dogecoin. Other accounts (Sui, Aptos, Stellar, TON, XRP, Bitcoin Taproot…) are
 * refused: no format of theirs is implemented, and a raw signature could authorize a transaction.
 */
export async function signMessage(
  client: Latchkey,
  parameters: SignMessageParameters,
): Promise<SignMessageReturnType> {
  const { signWith, message, kind: _kind, ...options } = parameters
  const bytes = typeof message === 'string' ? utf8ToBytes(message) : message
  const { format, addressFormat } = await formatFor(client, parameters)
  const { payload, hashFunction } = await payloadOf(format, signWith, bytes, addressFormat)
  return thenOrResume(
    signRawPayloads(client, {
      signWith,
      payloads: [bytesToHex(payload)],
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction,
      ...options,
    }),
    ({ signatures }) => signatureOf(format, addressFormat, signatures[0] as SignMessageReturnType),
  )
}

function signatureOf(
  format: MessageFormat,
  addressFormat: string | undefined,
  { r, s, v }: SignMessageReturnType,
): SignMessageReturnType {
  const rs = hexToBytes(`${r}${s}`)
  const recovery = Number.parseInt(v, 16)
  switch (format) {
    case 'solana':
      return { r, s, v, signature: `${r}${s}`, signatureBase58: base58.encode(rs), format }
    case 'eip191':
    case 'tron':
      return { r, s, v, signature: `0x${r}${s}${(27 + recovery).toString(16)}`, format }
    case 'adr036':
      return { r, s, v, signature: `${r}${s}`, signatureBase64: toBase64(rs), format }
    case 'bip137': {
      // Header: 39 + recovery for P2WPKH, 31 + recovery for P2PKH (compressed keys).
      const header = (addressFormat?.endsWith('P2WPKH') ? 39 : 31) + recovery
      return {
        r,
        s,
        v,
        signature: `${r}${s}`,
        signatureBase64: toBase64(concatBytes(new Uint8Array([header]), rs)),
        format,
      }
    }
  }
}
