/**
 * A Solana "message" that is a compiled transaction message needing the account's signature is
 * refused by signMessage and by the @solana/kit signer's signMessages: its ed25519 signature would
 * be the transaction's (a page could otherwise move the account's SOL by asking for a "message").
 * Plain messages (text, bytes, Solana's off-chain format) are still signed and verify. The signer's
 * signMessages also refuses what the same key would sign for another ed25519 chain (32 bytes, an
 * Aptos signing message), as signMessage does (signMessageSharedKey.test.ts).
 */

import { sha3_256 } from '@noble/hashes/sha3.js'
import { concatBytes } from '@noble/hashes/utils.js'
import {
  type Address,
  address as addressOf,
  appendTransactionMessageInstruction,
  compileTransaction,
  compressTransactionMessageUsingAddressLookupTables,
  createNoopSigner,
  createSignableMessage,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressEncoder,
  getPublicKeyFromAddress,
  lamports,
  pipe,
  type SignatureBytes,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  type Transaction,
  verifySignature,
} from '@solana/kit'
import { getTransferSolInstruction } from '@solana-program/system'
import { FailedTransactionMetadata, LiteSVM } from 'litesvm'
import { describe, expect, it } from 'vitest'
import { createWallet } from '../core/actions/activities/createWallet.ts'
import { signMessage } from '../core/actions/activities/signMessage.ts'
import { u64, uleb } from '../core/test/aptosBcs.ts'
import { createClientFixture } from '../core/test/fixtures.ts'
import { hexToBytes, utf8ToBytes } from '../core/utils/encoding.ts'
import { isSolanaTransactionMessage } from '../core/utils/solanaTransactionMessage.ts'
import { createLatchkeySolanaSigner } from './index.ts'

const SOL = 1_000_000_000n
const BLOCKHASH = {
  blockhash: addressOf('11111111111111111111111111111111') as never,
  lastValidBlockHeight: 1n,
}

/** The compiled message of a transfer from `source` to `destination`, `feePayer` paying. */
function transferMessage(
  parameters: { feePayer: Address; source: Address; destination: Address; amount?: bigint },
  options: { version?: 0 | 'legacy'; blockhash?: typeof BLOCKHASH; lookupTable?: Address } = {},
) {
  const source = createNoopSigner(parameters.source)
  let message = pipe(
    createTransactionMessage({ version: options.version ?? 0 }),
    (m) => setTransactionMessageFeePayerSigner(createNoopSigner(parameters.feePayer), m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(options.blockhash ?? BLOCKHASH, m),
    (m) =>
      appendTransactionMessageInstruction(
        getTransferSolInstruction({
          source,
          destination: parameters.destination,
          amount: lamports(parameters.amount ?? SOL),
        }),
        m,
      ),
  )
  if (options.lookupTable)
    message = compressTransactionMessageUsingAddressLookupTables(message as never, {
      [options.lookupTable]: [parameters.destination],
    }) as never
  return compileTransaction(message)
}

const keyOf = (address: Address) => new Uint8Array(getAddressEncoder().encode(address))

/**
 * The Aptos signing message of a fee-payer transaction whose sender is `publicKey`'s Aptos
 * account, running a script with one vector<u8> argument laid out so that the whole parses as a
 * Solana legacy message naming `publicKey` a required signer: its salt,
 * sha3-256("APTOS::RawTransactionWithData"), begins 5e fa 3c 4f, read as 94 required signatures and
 * 79 keys.
 */
function aptosFeePayerSigningMessage(publicKey: Uint8Array, feePayer: Uint8Array) {
  const salt = sha3_256(utf8ToBytes('APTOS::RawTransactionWithData'))
  const sender = sha3_256(concatBytes(publicKey, Uint8Array.of(0)))
  const script = Uint8Array.from([0xa1, 0x1c, 0xeb, 0x0b, 7, 0, 0, 0, 0, 0, 0, 0])
  const head = concatBytes(
    salt,
    Uint8Array.of(1), // MultiAgentWithFeePayer
    sender,
    u64(0n), // sequence number
    Uint8Array.of(0), // TransactionPayload::Script
    uleb(script.length),
    script,
    uleb(0), // type arguments
    uleb(1), // one argument,
    Uint8Array.of(4), // a vector<u8>
  )
  const argLength = 2500
  const argAt = head.length + uleb(argLength).length
  const arg = new Uint8Array(argLength)
  arg.set(publicKey, 4 + 32 * Math.ceil((argAt - 4) / 32) - argAt)
  arg[4 + 32 * 79 + 32 - argAt] = 0 // no instructions
  return concatBytes(
    head,
    uleb(argLength),
    arg,
    u64(2_000n), // max gas
    u64(100n), // gas unit price
    u64(4_000_000_000n), // expiration
    Uint8Array.of(1), // chain id
    uleb(0), // no secondary signers
    feePayer,
  )
}

describe('isSolanaTransactionMessage against messages @solana/kit compiles', async () => {
  const [user, other, thief, table] = await Promise.all(
    [0, 1, 2, 3].map(async () => (await generateKeyPairSigner()).address),
  )
  const bytes = (transaction: Transaction) => new Uint8Array(transaction.messageBytes)

  it('recognizes legacy and v0 messages, with address lookup tables, the signer paying or not', () => {
    for (const version of [0, 'legacy'] as const) {
      const paying = transferMessage({ feePayer: user!, source: user!, destination: thief! }, { version })
      expect(isSolanaTransactionMessage(bytes(paying), keyOf(user!)), `${version}, fee payer`).toBe(true)
      const sending = transferMessage({ feePayer: other!, source: user!, destination: thief! }, { version })
      expect(isSolanaTransactionMessage(bytes(sending), keyOf(user!)), `${version}, second signer`).toBe(true)
      // Trailing bytes do not hide it.
      const padded = new Uint8Array([...bytes(paying), 1, 2, 3])
      expect(isSolanaTransactionMessage(padded, keyOf(user!)), `${version}, trailing bytes`).toBe(true)
    }
    const withTable = transferMessage(
      { feePayer: user!, source: user!, destination: thief! },
      { lookupTable: table! },
    )
    expect(withTable.messageBytes[0]).toBe(0x80)
    expect(isSolanaTransactionMessage(bytes(withTable), keyOf(user!))).toBe(true)
  })

  it('lets through transactions the signer does not sign, truncated ones, text and off-chain messages', () => {
    const theirs = transferMessage({ feePayer: other!, source: other!, destination: user! })
    expect(isSolanaTransactionMessage(bytes(theirs), keyOf(user!))).toBe(false)
    const mine = bytes(transferMessage({ feePayer: user!, source: user!, destination: thief! }))
    for (const length of [0, 1, 4, 40, mine.length - 1])
      expect(isSolanaTransactionMessage(mine.subarray(0, length), keyOf(user!)), `${length} bytes`).toBe(
        false,
      )
    for (const text of ['Sign in to example.com', 'gm', '{"a":1}', ''])
      expect(isSolanaTransactionMessage(utf8ToBytes(text), keyOf(user!))).toBe(false)
    // Solana's off-chain message format starts with 0xff followed by "solana offchain".
    const offchain = new Uint8Array([0xff, ...utf8ToBytes('solana offchain'), 0, 0, ...mine])
    expect(isSolanaTransactionMessage(offchain, keyOf(user!))).toBe(false)
    // Versions other than 0 do not exist.
    expect(isSolanaTransactionMessage(new Uint8Array([0x81, ...mine.subarray(1)]), keyOf(user!))).toBe(false)
  })
})

async function setUp() {
  const fx = await createClientFixture()
  await fx.signUpDirect()
  const { addresses } = await createWallet(fx.client, { walletName: 'Sol', chains: ['solana'] })
  const address = addresses[0] as Address
  const svm = new LiteSVM()
  svm.airdrop(address, lamports(2n * SOL))
  const thief = (await generateKeyPairSigner()).address
  // A transfer of 1 SOL from the user's account to the thief, the user paying the fee: what a
  // page hands the app as "the message to sign".
  const unsigned = transferMessage(
    { feePayer: address, source: address, destination: thief },
    { blockhash: { blockhash: svm.latestBlockhash() as never, lastValidBlockHeight: 1_000n } },
  )
  /** The transaction with `signature` in the user's slot, run on LiteSVM: did it land? */
  const land = (signature: Uint8Array) => {
    const signed = {
      ...unsigned,
      signatures: { ...unsigned.signatures, [address]: signature as SignatureBytes },
    } as Transaction
    return !(svm.sendTransaction(signed as never) instanceof FailedTransactionMetadata)
  }
  return { fx, address, svm, thief, unsigned, land }
}

describe('a Solana message that is a transaction is not signed as a message', () => {
  it('signMessage signs plain messages (they verify) and refuses a compiled transfer (no SOL moves)', async () => {
    const { fx, address, svm, thief, unsigned, land } = await setUp()
    const publicKey = await getPublicKeyFromAddress(address)
    for (const message of ['Sign in to example.com', new Uint8Array([0, 1, 2])]) {
      const signed = await signMessage(fx.client, { signWith: address, message })
      expect(signed.format).toBe('solana')
      const bytes = typeof message === 'string' ? utf8ToBytes(message) : message
      expect(await verifySignature(publicKey, hexToBytes(signed.signature) as SignatureBytes, bytes)).toBe(
        true,
      )
    }

    const result = await signMessage(fx.client, {
      signWith: address,
      message: new Uint8Array(unsigned.messageBytes),
    }).then(
      (signed) => ({ landed: land(hexToBytes(`${signed.r}${signed.s}`)) }),
      (error: Error) => ({ refused: error }),
    )
    expect(svm.getBalance(thief) ?? 0n, 'lamports the "message" signature moved to the thief').toBe(0n)
    expect(result).toMatchObject({
      refused: { code: 'FIELD_INVALID', details: { field: 'message', rule: 'MESSAGE_IS_TRANSACTION' } },
    })
    // Naming the curve (no account lookup) changes nothing.
    await expect(
      signMessage(fx.client, {
        signWith: address,
        message: new Uint8Array(unsigned.messageBytes),
        kind: 'ed25519',
      }),
    ).rejects.toMatchObject({ details: { rule: 'MESSAGE_IS_TRANSACTION' } })
  })

  it('the @solana/kit signer’s signMessages signs plain messages and refuses a compiled transfer', async () => {
    const { fx, address, svm, thief, unsigned, land } = await setUp()
    const signer = createLatchkeySolanaSigner(fx.client, { address })
    const plain = createSignableMessage('Sign in to example.com')
    const [dictionary] = await signer.signMessages([plain])
    const publicKey = await getPublicKeyFromAddress(address)
    expect(await verifySignature(publicKey, dictionary?.[address] as SignatureBytes, plain.content)).toBe(
      true,
    )

    const result = await signer
      .signMessages([plain, createSignableMessage(new Uint8Array(unsigned.messageBytes))])
      .then(
        (dictionaries) => ({ landed: land(dictionaries[1]?.[address] as Uint8Array) }),
        (error: Error) => ({ refused: error }),
      )
    expect(svm.getBalance(thief) ?? 0n, 'lamports the "message" signature moved to the thief').toBe(0n)
    expect(result).toMatchObject({
      refused: { code: 'FIELD_INVALID', details: { rule: 'MESSAGE_IS_TRANSACTION', index: 1 } },
    })
  })

  it('the @solana/kit signer’s signMessages refuses what the same key signs for Sui, Stellar, TON, Aptos', async () => {
    const { fx, address } = await setUp()
    const signer = createLatchkeySolanaSigner(fx.client, { address })
    // A 32-byte digest (Sui, Stellar, TON transactions) and an Aptos signing message
    // (sha3-256("APTOS::RawTransaction") ‖ BCS RawTransaction): see signMessageSharedKey.test.ts.
    const aptosSalt = hexToBytes('b5e97db07fa0bd0e5598aa3643a9bc6f6693bddc1a9fec9e674a461eaa00b193')
    const plain = createSignableMessage('Sign in to example.com')
    for (const [content, rule] of [
      [new Uint8Array(32).fill(0x5a), 'MESSAGE_IS_DIGEST'],
      [new Uint8Array([...aptosSalt, ...new Uint8Array(90)]), 'MESSAGE_IS_APTOS_TRANSACTION'],
    ] as const)
      await expect(signer.signMessages([plain, createSignableMessage(content)])).rejects.toMatchObject({
        code: 'FIELD_INVALID',
        details: { field: 'content', rule, index: 1 },
      })
    const [dictionary] = await signer.signMessages([createSignableMessage(new Uint8Array(33).fill(0x5a))])
    expect(dictionary?.[address]).toHaveLength(64)
  })

  it('the @solana/kit signer’s signTransactions signs only a Solana transaction message that names it a signer, never a digest or an Aptos transaction given as one', async () => {
    const { fx, address } = await setUp()
    const signer = createLatchkeySolanaSigner(fx.client, { address })
    // A transaction as a caller may build one, its message a 32-byte digest (what the same key
    // signs for Sui, Stellar or TON), or text.
    for (const messageBytes of [
      new Uint8Array(32).fill(0x5a),
      new TextEncoder().encode('Sign in to example.com'),
    ])
      await expect(
        signer.signTransactions([{ messageBytes, signatures: { [address]: null } } as never]),
      ).rejects.toMatchObject({
        code: 'FIELD_INVALID',
        details: { field: 'messageBytes', rule: 'MESSAGE_IS_NOT_TRANSACTION', index: 0 },
      })
    // An Aptos fee-payer transaction of the same key, its script argument making it parse as a
    // Solana message naming the account a signer: still not signed.
    const key = new Uint8Array(getAddressEncoder().encode(address as Address))
    const aptos = aptosFeePayerSigningMessage(key, new Uint8Array(32).fill(7))
    expect(isSolanaTransactionMessage(aptos, key)).toBe(true)
    await expect(
      signer.signTransactions([{ messageBytes: aptos, signatures: { [address]: null } } as never]),
    ).rejects.toMatchObject({ details: { rule: 'MESSAGE_IS_NOT_TRANSACTION' } })
  })
})
