/**
 * `latchkey/solana`: @solana/kit signers for a Solana account of a Latchkey wallet. The private key
 * never leaves the service; the signer asks it for ed25519 signatures with the active session.
 */
import {
  type Address,
  getAddressEncoder,
  getBase16Decoder,
  getBase16Encoder,
  getTransactionDecoder,
  getTransactionEncoder,
  type MessagePartialSigner,
  type MessagePartialSignerConfig,
  type ReadonlyUint8Array,
  type SignableMessage,
  type SignatureBytes,
  type SignatureDictionary,
  type Transaction,
  type TransactionPartialSigner,
  type TransactionPartialSignerConfig,
  address as toAddress,
} from '@solana/kit'
import { signRawPayloads } from '../core/actions/activities/signRawPayloads.ts'
import { signTransaction } from '../core/actions/activities/signTransaction.ts'
import type { Latchkey } from '../core/createLatchkey.ts'
import { LatchkeyError } from '../core/errors.ts'
import { hexToBytes } from '../core/utils/encoding.ts'
import { isAptosSigningMessage, solanaMessageRefusal } from '../core/utils/solanaMessageRefusal.ts'
import { isSolanaTransactionMessage } from '../core/utils/solanaTransactionMessage.ts'

export type CreateLatchkeySolanaSignerParameters<TAddress extends string = string> = {
  /** The Solana (base58) address of a wallet account of the signed-in user. */
  address: Address<TAddress> | TAddress
  /** Organization that holds the account. @default the session's organization */
  organizationId?: string | undefined
  /** Sign with this session instead of the active one. */
  sessionId?: string | undefined
  /**
   * How `signTransactions` asks the service. `sign_raw_payloads`: one activity for the whole batch
   * over the transactions' message bytes. `sign_transaction`: one activity per whole transaction,
   * which the service decodes, so its policies can read `solana.tx` (programs, transfers…).
   * @default 'sign_raw_payloads'
   */
  signTransactionsWith?: 'sign_raw_payloads' | 'sign_transaction' | undefined
}

/** A @solana/kit `TransactionPartialSigner` and `MessagePartialSigner` backed by Latchkey. */
export type LatchkeySolanaSigner<TAddress extends string = string> = TransactionPartialSigner<TAddress> &
  MessagePartialSigner<TAddress>

/**
 * Creates a signer for `address`. `signTransactions` and `signMessages` each make ONE
 * `sign_raw_payloads` request for the whole batch (ed25519, `HASH_FUNCTION_NOT_APPLICABLE`) and
 * return one `SignatureDictionary` per item, so the signer composes with kit's
 * `signTransactionMessageWithSigners` beside other signers (a separate fee payer, for example).
 * With `signTransactionsWith: 'sign_transaction'` each transaction goes whole to the service.
 * `signMessages` refuses a message that is a compiled transaction message needing this account's
 * signature (`FIELD_INVALID`, `details.rule: 'MESSAGE_IS_TRANSACTION'`), and what a Sui, Stellar,
 * TON or Aptos transaction of the same key signs: any 32 bytes (`MESSAGE_IS_DIGEST`), an Aptos
 * signing message (`MESSAGE_IS_APTOS_TRANSACTION`, `MESSAGE_IS_APTOS_STRUCT`). Unlike kit's own
 * key pair signer it cannot sign an empty message: the service takes none, so one is refused
 * before anything is asked (`FIELD_INVALID`, `details.rule: 'MESSAGE_IS_EMPTY'`).
 */
export function createLatchkeySolanaSigner<TAddress extends string = string>(
  client: Latchkey,
  parameters: CreateLatchkeySolanaSignerParameters<TAddress>,
): LatchkeySolanaSigner<TAddress> {
  const address = toAddress<TAddress>(parameters.address)
  const { organizationId, sessionId, signTransactionsWith = 'sign_raw_payloads' } = parameters
  const hex = getBase16Decoder()
  const fail = (message: string) => new LatchkeyError(message, { code: 'UNKNOWN' })

  /** One `sign_transaction`: the whole transaction out, our signature read back from the signed one. */
  async function signWhole(transaction: Transaction, signal?: AbortSignal): Promise<SignatureDictionary> {
    const { signedTransaction } = await signTransaction(client, {
      signWith: address,
      type: 'TRANSACTION_TYPE_SOLANA',
      unsignedTransaction: hex.decode(getTransactionEncoder().encode(transaction)),
      organizationId,
      sessionId,
      signal,
    })
    const signed = getTransactionDecoder().decode(getBase16Encoder().encode(signedTransaction))
    // The signature must cover the message we asked about, byte for byte.
    if (hex.decode(signed.messageBytes) !== hex.decode(transaction.messageBytes))
      throw fail('The service returned a transaction with a different message')
    const signature = signed.signatures[address]
    if (signature?.length !== 64) throw fail('The service returned the transaction without our signature')
    return Object.freeze({ [address]: signature }) as SignatureDictionary
  }

  async function sign(
    payloads: readonly ReadonlyUint8Array[],
    signal?: AbortSignal,
  ): Promise<SignatureDictionary[]> {
    if (payloads.length === 0) return []
    const { signatures } = await signRawPayloads(client, {
      signWith: address,
      payloads: payloads.map((payload) => hex.decode(payload)),
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
      organizationId,
      sessionId,
      signal,
    })
    if (signatures.length !== payloads.length)
      throw fail(`The service returned ${signatures.length} signatures for ${payloads.length} payloads`)
    return signatures.map(({ r, s }) => {
      const bytes = hexToBytes(`${r}${s}`)
      if (bytes.length !== 64) throw fail(`The service returned a ${bytes.length}-byte ed25519 signature`)
      return Object.freeze({ [address]: bytes as SignatureBytes }) as SignatureDictionary
    })
  }

  return Object.freeze({
    address,
    signTransactions(
      transactions: readonly Transaction[],
      config?: TransactionPartialSignerConfig,
    ): Promise<readonly SignatureDictionary[]> {
      const key = getAddressEncoder().encode(address) as Uint8Array
      for (const [index, transaction] of transactions.entries()) {
        // A transaction lists its required signers as the keys of `signatures`.
        if (!(address in transaction.signatures))
          return Promise.reject(
            new LatchkeyError(`${address} is not a required signer of transaction ${index}`, {
              code: 'FIELD_INVALID',
              details: { field: 'signatures', address, index },
            }),
          )
        // And its message is a Solana transaction's that names it a signer, and no Aptos signing
        // message: any other bytes (a digest another ed25519 chain's transaction signs, which
        // `signMessages` refuses; an Aptos fee-payer transaction whose script argument makes it
        // parse as a Solana message) are not signed as one.
        const messageBytes = new Uint8Array(transaction.messageBytes)
        if (!isSolanaTransactionMessage(messageBytes, key) || isAptosSigningMessage(messageBytes))
          return Promise.reject(
            new LatchkeyError(
              `Transaction ${index}'s message is not a Solana transaction message that ${address} signs, so it was not signed`,
              {
                code: 'FIELD_INVALID',
                details: { field: 'messageBytes', rule: 'MESSAGE_IS_NOT_TRANSACTION', index },
              },
            ),
          )
      }
      if (signTransactionsWith === 'sign_transaction')
        return Promise.all(transactions.map((transaction) => signWhole(transaction, config?.abortSignal)))
      return sign(
        transactions.map((transaction) => transaction.messageBytes),
        config?.abortSignal,
      )
    },
    signMessages(
      messages: readonly SignableMessage[],
      config?: MessagePartialSignerConfig,
    ): Promise<readonly SignatureDictionary[]> {
      // A message whose signature would authorize a transaction (of Solana, or of another ed25519
      // chain the same key may be an account of) is not signed (Solana wallets refuse the former too).
      const key = getAddressEncoder().encode(address) as Uint8Array
      for (const [index, message] of messages.entries()) {
        if (message.content.length === 0)
          return Promise.reject(
            new LatchkeyError(
              `Message ${index} is empty: the Latchkey service does not sign an empty message`,
              {
                code: 'FIELD_INVALID',
                details: { field: 'content', rule: 'MESSAGE_IS_EMPTY', index },
              },
            ),
          )
        const refusal = solanaMessageRefusal(message.content as Uint8Array, key)
        if (refusal)
          return Promise.reject(
            new LatchkeyError(`Message ${index} ${refusal.reason}`, {
              code: 'FIELD_INVALID',
              details: { field: 'content', rule: refusal.rule, index },
            }),
          )
      }
      return sign(
        messages.map((message) => message.content),
        config?.abortSignal,
      )
    },
  })
}
