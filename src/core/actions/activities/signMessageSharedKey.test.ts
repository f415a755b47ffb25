/**
 * A Solana account's key may also be an Aptos, Sui, Stellar or TON account's (a wallet's accounts
 * at one path, a private key with several address formats), and those chains' transactions are
 * raw ed25519 signatures of chosen bytes: Aptos of a salted BCS transaction, Sui, Stellar and TON of
 * a 32-byte digest. signMessage on the Solana account must not sign them as a "message" (a page
 * choosing the message would get a transfer out of the other account), with or without `kind`.
 * Controls: the accounts share one key, and text and other bytes still sign and verify.
 */
import { ed25519 } from '@noble/curves/ed25519.js'
import { blake2b } from '@noble/hashes/blake2.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { sha3_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { base58 } from '@scure/base'
import { beforeAll, describe, expect, it } from 'vitest'
import { u64, uleb } from '../../test/aptosBcs.ts'
import { type ClientFixture, createClientFixture } from '../../test/fixtures.ts'
import { getWalletAccounts } from '../queries/getWalletAccounts.ts'
import { createWallet } from './createWallet.ts'
import { signMessage } from './signMessage.ts'

const PATH = "m/44'/501'/0'/0'"
const FORMATS = [
  'ADDRESS_FORMAT_SOLANA',
  'ADDRESS_FORMAT_APTOS',
  'ADDRESS_FORMAT_SUI',
  'ADDRESS_FORMAT_XLM',
] as const

const bcsString = (s: string) => concatBytes(uleb(utf8ToBytes(s).length), utf8ToBytes(s))
const bcsBytes = (b: Uint8Array) => concatBytes(uleb(b.length), b)

/** Aptos: the signing message of a RawTransaction `0x1::aptos_account::transfer(to, amount)`. */
function aptosTransferSigningMessage(sender: Uint8Array, to: Uint8Array, amount: bigint) {
  const moduleAddress = new Uint8Array(32)
  moduleAddress[31] = 1
  const payload = concatBytes(
    uleb(2), // TransactionPayload::EntryFunction
    moduleAddress,
    bcsString('aptos_account'),
    bcsString('transfer'),
    uleb(0), // no type arguments
    uleb(2),
    bcsBytes(to),
    bcsBytes(u64(amount)),
  )
  const raw = concatBytes(
    sender,
    u64(0n), // sequence number
    payload,
    u64(200_000n), // max gas
    u64(100n), // gas unit price
    u64(4_000_000_000n), // expiration
    new Uint8Array([1]), // chain id: mainnet
  )
  return concatBytes(sha3_256(utf8ToBytes('APTOS::RawTransaction')), raw)
}

type Account = { address: string; publicKey: Uint8Array }

describe('signMessage on a Solana account whose key is also another ed25519 chain’s account', () => {
  let fx: ClientFixture
  let solana: Account
  let aptos: Account
  let sui: Account
  let stellar: Account

  /** signMessage's signature, or undefined when it refused; the refusal's details. */
  async function tryToSign(message: Uint8Array, kind?: 'ed25519') {
    try {
      const signed = await signMessage(fx.client, { signWith: solana.address, message, kind })
      return { signature: hexToBytes(signed.signature) }
    } catch (error) {
      return { refused: error as { code: string; details: Record<string, unknown> } }
    }
  }

  beforeAll(async () => {
    fx = await createClientFixture()
    await fx.signUpDirect()
    await createWallet(fx.client, {
      walletName: 'One ed25519 key, four chains',
      accounts: FORMATS.map((addressFormat) => ({
        curve: 'CURVE_ED25519',
        pathFormat: 'PATH_FORMAT_BIP32',
        path: PATH,
        addressFormat,
      })),
    })
    const { accounts } = await getWalletAccounts(fx.client, { paginationOptions: { limit: '100' } })
    const of = (format: (typeof FORMATS)[number]) => {
      const found = accounts.find((a) => a.addressFormat === format)
      if (!found) throw new Error(`no ${format}`)
      return { address: found.address, publicKey: hexToBytes(found.publicKey.replace(/^0x/, '')) }
    }
    ;[solana, aptos, sui, stellar] = FORMATS.map(of) as [Account, Account, Account, Account]
  }, 60_000)

  it('shares one key between the accounts; text and other bytes sign and verify', async () => {
    const key = bytesToHex(solana.publicKey)
    expect(bytesToHex(base58.decode(solana.address))).toBe(key)
    for (const other of [aptos, sui, stellar]) expect(bytesToHex(other.publicKey)).toBe(key)
    // Aptos single-key ed25519 address: sha3-256(publicKey ‖ 0x00); Sui: blake2b-256(0x00 ‖ publicKey).
    expect(aptos.address.replace(/^0x/, '')).toBe(
      bytesToHex(sha3_256(concatBytes(aptos.publicKey, new Uint8Array([0])))),
    )
    expect(sui.address.replace(/^0x/, '')).toBe(
      bytesToHex(blake2b(concatBytes(new Uint8Array([0]), sui.publicKey), { dkLen: 32 })),
    )
    // The other accounts themselves sign no message at all.
    for (const other of [aptos, sui, stellar])
      await expect(signMessage(fx.client, { signWith: other.address, message: 'gm' })).rejects.toMatchObject({
        details: { rule: 'NO_MESSAGE_FORMAT' },
      })

    const siws = utf8ToBytes(
      `example.com wants you to sign in with your Solana account:\n${solana.address}\n\nURI: https://example.com\nVersion: 1\nNonce: 8e2f4c1a\nIssued At: 2026-01-01T00:00:00Z`,
    )
    for (const message of [siws, new Uint8Array([0, 1, 2]), new Uint8Array(64).fill(0xee)]) {
      const { signature } = await tryToSign(message)
      expect(signature && ed25519.verify(signature, message, solana.publicKey)).toBe(true)
    }
  })

  it('refuses an Aptos transfer out of the same key’s Aptos account (100 APT to a thief)', async () => {
    const thief = new Uint8Array(32).fill(0xee)
    const message = aptosTransferSigningMessage(
      hexToBytes(aptos.address.replace(/^0x/, '')),
      thief,
      10n ** 10n,
    )
    for (const kind of [undefined, 'ed25519'] as const) {
      const { signature, refused } = await tryToSign(message, kind)
      // What an Aptos validator checks for an Ed25519 authenticator: ed25519 over the signing message.
      const authorizesTransfer =
        signature !== undefined && ed25519.verify(signature, message, aptos.publicKey)
      expect(authorizesTransfer, 'the Solana message signature authorizes an Aptos transfer').toBe(false)
      expect(refused).toMatchObject({
        code: 'FIELD_INVALID',
        details: { field: 'message', rule: 'MESSAGE_IS_APTOS_TRANSACTION' },
      })
    }
  })

  it('refuses a Sui transaction digest and a Stellar transaction hash of the same key’s accounts', async () => {
    // Sui: ed25519 over blake2b-256(intent [0,0,0] ‖ bcs(TransactionData)).
    const transactionData = concatBytes(new Uint8Array([0]), hexToBytes(sui.address.replace(/^0x/, '')))
    const suiDigest = blake2b(concatBytes(new Uint8Array([0, 0, 0]), transactionData), { dkLen: 32 })
    // Stellar: ed25519 over sha256(sha256(passphrase) ‖ ENVELOPE_TYPE_TX ‖ XDR Transaction).
    const stellarHash = sha256(
      concatBytes(
        sha256(utf8ToBytes('Public Global Stellar Network ; September 2015')),
        new Uint8Array([0, 0, 0, 2]),
        base58.decode(solana.address), // any transaction bytes: the signature is over the hash
      ),
    )
    for (const [digest, other] of [
      [suiDigest, sui],
      [stellarHash, stellar],
    ] as const)
      for (const kind of [undefined, 'ed25519'] as const) {
        const { signature, refused } = await tryToSign(digest, kind)
        const authorizes = signature !== undefined && ed25519.verify(signature, digest, other.publicKey)
        expect(authorizes, 'the Solana message signature is the other chain’s transaction signature').toBe(
          false,
        )
        expect(refused).toMatchObject({
          code: 'FIELD_INVALID',
          details: { field: 'message', rule: 'MESSAGE_IS_DIGEST' },
        })
      }
  })
})
