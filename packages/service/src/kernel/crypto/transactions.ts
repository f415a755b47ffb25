import { Transaction } from 'micro-eth-signer'
import { CryptoInputError } from './errors.ts'

/** What the service needs to know about a signed Ethereum transaction it is asked to broadcast. */
export interface DecodedTransaction {
  /** 0x-prefixed keccak-256 of the signed serialisation (the transaction hash). */
  hash: string
  /** EIP-55 checksummed sender recovered from the signature. */
  from: string
  /** Recipient (absent for contract creation). */
  to?: string
  nonce: bigint
  /** Absent for pre-EIP-155 legacy transactions. */
  chainId?: bigint
  /** micro-eth-signer type name: 'legacy' | 'eip2930' | 'eip1559' | 'eip4844' | 'eip7702'. */
  type: string
}

/** Decodes and checks a signed EIP-2718 transaction (hex, 0x optional). Throws CryptoInputError on garbage. */
export function decodeSignedTransaction(hex: string): DecodedTransaction {
  if (typeof hex !== 'string' || !/^(0x)?([0-9a-fA-F]{2})+$/.test(hex.trim()))
    throw new CryptoInputError('signedTransaction must be a hex string', 'signedTransaction')
  let tx: ReturnType<typeof Transaction.fromHex>
  try {
    tx = Transaction.fromHex(hex.trim().replace(/^0x/, '').toLowerCase())
  } catch (error) {
    throw new CryptoInputError(
      `signedTransaction is not a valid Ethereum transaction: ${(error as Error).message}`,
      'signedTransaction',
    )
  }
  if (!tx.isSigned) throw new CryptoInputError('signedTransaction is not signed', 'signedTransaction')
  let from: string
  try {
    if (!tx.verifySignature()) throw new Error('signature does not verify')
    from = tx.sender
  } catch (error) {
    throw new CryptoInputError(
      `signedTransaction has an invalid signature: ${(error as Error).message}`,
      'signedTransaction',
    )
  }
  const raw = tx.raw as { to?: string; nonce: bigint; chainId?: bigint }
  const decoded: DecodedTransaction = { hash: tx.hash, from, nonce: raw.nonce, type: tx.type }
  if (raw.to) decoded.to = raw.to
  if (raw.chainId !== undefined) decoded.chainId = raw.chainId
  return decoded
}
