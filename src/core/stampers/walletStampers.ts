import { encodeApiKeyStamp, STAMP_HEADER } from '@latchkey/protocol'
import { UserCancelledError, WalletUnavailableError } from '../errors.ts'
import { bytesToHex, utf8ToBytes } from '../utils/encoding.ts'
import type { Stamper } from './types.ts'

/** An EIP-1193 provider (injected `window.ethereum`, or one announced through EIP-6963). */
export interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] | Record<string, unknown> }): Promise<unknown>
}

/** The parts of a Wallet Standard Solana wallet we use. */
export interface SolanaWallet {
  name: string
  icon?: string
  accounts: readonly { address: string; publicKey: Uint8Array }[]
  features: Record<string, unknown>
}

/** A stamper that learns the signer's public key while stamping. */
export interface WalletStamper extends Stamper {
  /** Compressed secp256k1 hex (Ethereum) or 32-byte hex (Solana); set after the first stamp for Ethereum. */
  publicKey: string | undefined
}

/** EIP-1193 user rejection (code 4001) is a cancellation. */
const walletError = (error: unknown): Error => {
  if ((error as { code?: number })?.code === 4001)
    return new UserCancelledError('The wallet request was rejected', error)
  if (error instanceof Error) return error
  return new WalletUnavailableError(`The wallet failed: ${JSON.stringify(error)}`, error)
}

/**
 * `X-Stamp` with scheme `SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191`: the wallet `personal_sign`s
 * the body; the public key is recovered from the signature.
 */
export function ethereumWalletStamper(parameters: {
  provider: Eip1193Provider
  address: string
}): WalletStamper {
  const stamper: WalletStamper = {
    publicKey: undefined,
    async stamp(body) {
      const message = utf8ToBytes(body)
      let signature: unknown
      try {
        signature = await parameters.provider.request({
          method: 'personal_sign',
          params: [`0x${bytesToHex(message)}`, parameters.address],
        })
      } catch (error) {
        throw walletError(error)
      }
      if (typeof signature !== 'string') throw new WalletUnavailableError('The wallet returned no signature')
      const { recoverEip191PublicKey, ethereumAddressOf } = await import('./eip191.ts')
      const publicKey = recoverEip191PublicKey(message, signature)
      if (ethereumAddressOf(publicKey) !== parameters.address.toLowerCase())
        throw new WalletUnavailableError('The wallet signed with a different account than the one selected')
      stamper.publicKey = publicKey
      return {
        header: STAMP_HEADER,
        value: encodeApiKeyStamp({
          publicKey,
          scheme: 'SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191',
          signature: signature.replace(/^0x/, ''),
        }),
      }
    },
  }
  return stamper
}

type SolanaSignMessage = {
  signMessage(
    ...inputs: { account: SolanaWallet['accounts'][number]; message: Uint8Array }[]
  ): Promise<readonly { signedMessage: Uint8Array; signature: Uint8Array }[]>
}

/** `X-Stamp` with scheme `SIGNATURE_SCHEME_TK_API_ED25519` through a Wallet Standard `solana:signMessage`. */
export function solanaWalletStamper(parameters: {
  wallet: SolanaWallet
  account?: SolanaWallet['accounts'][number]
}): WalletStamper {
  const account = parameters.account ?? parameters.wallet.accounts[0]
  if (!account) throw new WalletUnavailableError(`${parameters.wallet.name} has no connected account`)
  const feature = parameters.wallet.features['solana:signMessage'] as SolanaSignMessage | undefined
  if (!feature) throw new WalletUnavailableError(`${parameters.wallet.name} cannot sign messages`)
  const publicKey = bytesToHex(account.publicKey)
  return {
    publicKey,
    async stamp(body) {
      let outputs: Awaited<ReturnType<SolanaSignMessage['signMessage']>>
      try {
        outputs = await feature.signMessage({ account, message: utf8ToBytes(body) })
      } catch (error) {
        throw walletError(error)
      }
      const signature = outputs[0]?.signature
      if (signature?.length !== 64 || !signature)
        throw new WalletUnavailableError('The wallet returned no signature')
      return {
        header: STAMP_HEADER,
        value: encodeApiKeyStamp({
          publicKey,
          scheme: 'SIGNATURE_SCHEME_TK_API_ED25519',
          signature: bytesToHex(signature),
        }),
      }
    },
  }
}
