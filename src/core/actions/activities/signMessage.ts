import { base58 } from '@scure/base'
import { LatchkeyError, thenOrResume } from '../../errors.ts'
import type { Latchkey } from '../../types.ts'
import { bytesToHex, hexToBytes, utf8ToBytes } from '../../utils/encoding.ts'
import type { ActionOptions } from '../options.ts'
import { getWalletAccounts } from '../queries/getWalletAccounts.ts'
import { signRawPayloads } from './signRawPayloads.ts'

export type SignMessageParameters = {
  /** Address of the wallet account that signs. */
  signWith: string
  /** Text (signed as UTF-8) or bytes. */
  message: string | Uint8Array
  /**
   * `ethereum`: EIP-191 `personal_sign`; `ed25519`: the raw message (Solana and other ed25519
   * chains); `secp256k1`: SHA-256 of the message. @default from the account (`0x` addresses: ethereum)
   */
  kind?: 'ethereum' | 'ed25519' | 'secp256k1' | undefined
} & ActionOptions
export type SignMessageReturnType = {
  r: string
  s: string
  v: string
  /** Ethereum: `0x` r‖s‖(27+v), as `personal_sign` returns; others: r‖s hex. */
  signature: string
  /**
   * ed25519 (Solana): the same 64-byte signature in base58, the form Solana tools (web3.js,
   * wallet adapters, explorers) expect. Absent for other kinds.
   */
  signatureBase58?: string
}

const isEthereumAddress = (value: string) => /^0x[0-9a-fA-F]{40}$/.test(value)

async function kindOf(
  client: Latchkey,
  parameters: SignMessageParameters,
): Promise<NonNullable<SignMessageParameters['kind']>> {
  if (parameters.kind) return parameters.kind
  if (isEthereumAddress(parameters.signWith)) return 'ethereum'
  const { accounts } = await getWalletAccounts(client, {
    paginationOptions: { limit: '100' },
    organizationId: parameters.organizationId,
    sessionId: parameters.sessionId,
    signal: parameters.signal,
  })
  const account = accounts.find((a) => a.address === parameters.signWith)
  if (!account)
    throw new LatchkeyError(
      `No wallet account ${parameters.signWith}; pass \`kind\` to sign with it anyway`,
      {
        code: 'WALLET_ACCOUNT_NOT_FOUND',
        details: { field: 'signWith' },
      },
    )
  if (account.curve === 'CURVE_ED25519') return 'ed25519'
  return account.addressFormat === 'ADDRESS_FORMAT_ETHEREUM' ? 'ethereum' : 'secp256k1'
}

/** Signs a message the way the account's chain expects (EIP-191 for Ethereum, raw for ed25519). */
export async function signMessage(
  client: Latchkey,
  parameters: SignMessageParameters,
): Promise<SignMessageReturnType> {
  const { signWith, message, kind: _kind, ...options } = parameters
  const bytes = typeof message === 'string' ? utf8ToBytes(message) : message
  const kind = await kindOf(client, parameters)
  let payload = bytes
  if (kind === 'ethereum') {
    const prefix = utf8ToBytes(`\x19Ethereum Signed Message:\n${bytes.length}`)
    payload = new Uint8Array(prefix.length + bytes.length)
    payload.set(prefix)
    payload.set(bytes, prefix.length)
  }
  return thenOrResume(
    signRawPayloads(client, {
      signWith,
      payloads: [bytesToHex(payload)],
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction:
        kind === 'ethereum'
          ? 'HASH_FUNCTION_KECCAK256'
          : kind === 'ed25519'
            ? 'HASH_FUNCTION_NOT_APPLICABLE'
            : 'HASH_FUNCTION_SHA256',
      ...options,
    }),
    ({ signatures }) => signatureOf(kind, signatures[0] as SignMessageReturnType),
  )
}

function signatureOf(
  kind: NonNullable<SignMessageParameters['kind']>,
  { r, s, v }: SignMessageReturnType,
): SignMessageReturnType {
  if (kind === 'ed25519')
    return { r, s, v, signature: `${r}${s}`, signatureBase58: base58.encode(hexToBytes(`${r}${s}`)) }
  return {
    r,
    s,
    v,
    signature: kind === 'ethereum' ? `0x${r}${s}${(27 + Number.parseInt(v, 16)).toString(16)}` : `${r}${s}`,
  }
}
