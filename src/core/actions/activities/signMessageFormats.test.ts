/**
 * signMessage signs in the message format of the account's chain, so that no "message" is a
 * transaction of that chain: a Cosmos or Sei account signs ADR-036 (Keplr's signArbitrary), Tron
 * TronWeb's signMessageV2, Bitcoin and Dogecoin BIP-137 "Signed Message". Each control checks a
 * plain message verifies the way that chain's verifiers do; each attack checks the signature of a
 * transaction shown as a message is not the transaction's. Accounts of chains with no format the
 * kit implements are refused before anything is signed.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { ripemd160 } from '@noble/hashes/legacy.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { base64, bech32, createBase58check } from '@scure/base'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Chain } from '../../chains.ts'
import { type ClientFixture, createClientFixture } from '../../test/fixtures.ts'
import { getWalletAccounts } from '../queries/getWalletAccounts.ts'
import { createWallet } from './createWallet.ts'
import { signMessage } from './signMessage.ts'

const hash160 = (bytes: Uint8Array) => ripemd160(sha256(bytes))
const base58check = createBase58check(sha256)

/** Amino JSON: keys sorted at every level, no whitespace. */
const sortedJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${sortedJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`
  return JSON.stringify(value)
}

/** Keplr's verifyADR36Amino: the key is the signer's, and signs the ADR-036 sign doc of `data`. */
function verifyAdr36(
  prefix: string,
  signer: string,
  data: Uint8Array,
  publicKey: Uint8Array,
  signature: Uint8Array,
) {
  if (bech32.encode(prefix, bech32.toWords(hash160(publicKey))) !== signer) return false
  const signDoc = sortedJson({
    chain_id: '',
    account_number: '0',
    sequence: '0',
    fee: { gas: '0', amount: [] },
    msgs: [{ type: 'sign/MsgSignData', value: { signer, data: base64.encode(data) } }],
    memo: '',
  })
  return secp256k1.verify(signature, sha256(utf8ToBytes(signDoc)), publicKey, { prehash: false, lowS: true })
}

/** The public key a 65-byte r‖s‖recovery signature of `digest` recovers. */
const recover = (rs: Uint8Array, recovery: number, digest: Uint8Array) =>
  secp256k1.Signature.fromBytes(rs, 'compact').addRecoveryBit(recovery).recoverPublicKey(digest)

/** TronWeb's verifyMessageV2: the address recovered from the signature of the prefixed message. */
function tronSigner(message: Uint8Array, signature: string) {
  const bytes = hexToBytes(signature.replace(/^0x/, ''))
  const digest = keccak_256(concatBytes(utf8ToBytes(`\x19TRON Signed Message:\n${message.length}`), message))
  const point = recover(bytes.subarray(0, 64), (bytes[64] as number) - 27, digest)
  return base58check.encode(
    concatBytes(new Uint8Array([0x41]), keccak_256(point.toBytes(false).subarray(1)).subarray(12)),
  )
}

/** BIP-137 (bitcoinjs-message's verify): the key recovered from the base64 signature, and its kind. */
function bip137Signer(magic: string, message: Uint8Array, signatureBase64: string) {
  const bytes = base64.decode(signatureBase64)
  const header = bytes[0] as number
  const digest = sha256(sha256(concatBytes(utf8ToBytes(magic), new Uint8Array([message.length]), message)))
  const point = recover(bytes.subarray(1), (header - 27) & 3, digest)
  return { publicKey: point.toBytes(true), header }
}

describe('signMessage formats of secp256k1 chains', () => {
  let fx: ClientFixture
  const account: Partial<Record<Chain, { address: string; publicKey: Uint8Array }>> = {}
  const chains: Chain[] = ['cosmos', 'sei', 'tron', 'bitcoin', 'bitcoin-testnet', 'dogecoin']
  const refused: Chain[] = ['xrp', 'bitcoin-taproot', 'sui', 'aptos', 'stellar', 'ton']

  beforeAll(async () => {
    fx = await createClientFixture()
    await fx.signUpDirect()
    await createWallet(fx.client, { walletName: 'Many', chains: [...chains, ...refused] })
    const { accounts } = await getWalletAccounts(fx.client, { paginationOptions: { limit: '100' } })
    const { CHAINS } = await import('../../chains.ts')
    for (const chain of [...chains, ...refused]) {
      const found = accounts.find((a) => a.addressFormat === CHAINS[chain].addressFormat)
      if (!found) throw new Error(`no ${chain} account`)
      account[chain] = { address: found.address, publicKey: hexToBytes(found.publicKey.replace(/^0x/, '')) }
    }
  })

  it('Cosmos: an amino StdSignDoc shown as a message is signed as ADR-036 data, not as the send', async () => {
    const { address, publicKey } = account.cosmos!
    expect(address).toMatch(/^cosmos1/)
    // A send of 1,000,000 ATOM from the user's account, on cosmoshub-4, as a "message".
    const signDoc = sortedJson({
      chain_id: 'cosmoshub-4',
      account_number: '12345',
      sequence: '0',
      fee: { amount: [{ denom: 'uatom', amount: '5000' }], gas: '200000' },
      msgs: [
        {
          type: 'cosmos-sdk/MsgSend',
          value: {
            from_address: address,
            to_address: 'cosmos1thief0000000000000000000000000000000000',
            amount: [{ denom: 'uatom', amount: '1000000000000' }],
          },
        },
      ],
      memo: '',
    })
    const signed = await signMessage(fx.client, { signWith: address, message: signDoc })
    const rs = hexToBytes(signed.signature)
    // What a Cosmos SDK node checks for SIGN_MODE_LEGACY_AMINO_JSON.
    const authorizesTheSend = secp256k1.verify(rs, sha256(utf8ToBytes(signDoc)), publicKey, {
      prehash: false,
      lowS: true,
    })
    expect(authorizesTheSend, 'the message signature is a valid cosmoshub-4 MsgSend signature').toBe(false)
    expect(verifyAdr36('cosmos', address, utf8ToBytes(signDoc), publicKey, rs)).toBe(true)

    // Control: plain text verifies under ADR-036; `kind: 'secp256k1'` signs the same way.
    for (const kind of [undefined, 'secp256k1'] as const) {
      const plain = await signMessage(fx.client, {
        signWith: address,
        message: 'Sign in to example.com',
        kind,
      })
      expect(plain.format).toBe('adr036')
      expect(base64.decode(plain.signatureBase64!)).toEqual(hexToBytes(plain.signature))
      expect(
        verifyAdr36(
          'cosmos',
          address,
          utf8ToBytes('Sign in to example.com'),
          publicKey,
          hexToBytes(plain.signature),
        ),
      ).toBe(true)
    }
  })

  it('Sei: ADR-036 with its own prefix', async () => {
    const { address, publicKey } = account.sei!
    const signed = await signMessage(fx.client, { signWith: address, message: 'gm' })
    expect(signed.format).toBe('adr036')
    expect(verifyAdr36('sei', address, utf8ToBytes('gm'), publicKey, hexToBytes(signed.signature))).toBe(true)
  })

  it('Tron: signMessageV2 (keccak-256 of the prefixed message), never sha256(raw_data) of a transaction', async () => {
    const { address, publicKey } = account.tron!
    expect(address).toMatch(/^T/)
    // The txID of a Tron transaction is sha256(raw_data); its signature is over that txID.
    const rawData = hexToBytes(
      '0a02a1b22208c3d4e5f60718293a40d8e3d2c5b4315a67080112630a2d747970652e676f6f676c65617069732e636f6d2f70726f746f636f6c2e5472616e73666572436f6e7472616374',
    )
    const signed = await signMessage(fx.client, { signWith: address, message: rawData })
    expect(signed.format).toBe('tron')
    const rs = hexToBytes(signed.signature.slice(2, 130))
    expect(secp256k1.verify(rs, sha256(rawData), publicKey, { prehash: false }), 'signs the txID').toBe(false)
    expect(tronSigner(rawData, signed.signature)).toBe(address)

    const plain = await signMessage(fx.client, { signWith: address, message: 'Sign in to example.com' })
    expect(plain.signature).toMatch(/^0x[0-9a-f]{128}(1b|1c)$/)
    expect(tronSigner(utf8ToBytes('Sign in to example.com'), plain.signature)).toBe(address)
  })

  it('Bitcoin and Dogecoin: BIP-137 signatures that recover the account’s key, never a sighash', async () => {
    for (const [chain, magic, header] of [
      ['bitcoin', '\x18Bitcoin Signed Message:\n', 39],
      ['bitcoin-testnet', '\x18Bitcoin Signed Message:\n', 39],
      ['dogecoin', '\x19Dogecoin Signed Message:\n', 31],
    ] as const) {
      const { address, publicKey } = account[chain]!
      const signed = await signMessage(fx.client, { signWith: address, message: 'Sign in to example.com' })
      expect(signed.format, chain).toBe('bip137')
      const recovered = bip137Signer(magic, utf8ToBytes('Sign in to example.com'), signed.signatureBase64!)
      expect(recovered.header - header, chain).toBeOneOf([0, 1])
      expect(bytesToHex(recovered.publicKey), chain).toBe(bytesToHex(publicKey))
      if (chain === 'bitcoin')
        expect(bech32.encode('bc', [0, ...bech32.toWords(hash160(recovered.publicKey))])).toBe(address)
      if (chain === 'dogecoin')
        expect(base58check.encode(concatBytes(new Uint8Array([0x1e]), hash160(recovered.publicKey)))).toBe(
          address,
        )
    }
    // A sighash is sha256(sha256(preimage)): the first hash handed over as a "message" must not
    // come back signed as sha256 of it.
    const { address, publicKey } = account.bitcoin!
    const firstHash = sha256(utf8ToBytes('a BIP-143 sighash preimage spending the user’s coins'))
    const signed = await signMessage(fx.client, { signWith: address, message: firstHash })
    expect(
      secp256k1.verify(hexToBytes(signed.signature), sha256(firstHash), publicKey, { prehash: false }),
      'signs the sighash',
    ).toBe(false)
  })

  it('refuses accounts of chains with no message format, and a kind that is not the account’s', async () => {
    for (const chain of refused) {
      const { address } = account[chain]!
      await expect(signMessage(fx.client, { signWith: address, message: 'gm' }), chain).rejects.toMatchObject(
        {
          code: 'FIELD_INVALID',
          details: { field: 'signWith', rule: 'NO_MESSAGE_FORMAT' },
        },
      )
    }
    await expect(
      signMessage(fx.client, { signWith: account.cosmos!.address, message: 'gm', kind: 'ed25519' }),
    ).rejects.toMatchObject({ code: 'FIELD_INVALID', details: { field: 'kind' } })
    await expect(
      signMessage(fx.client, { signWith: account.sui!.address, message: 'gm', kind: 'ed25519' }),
    ).rejects.toMatchObject({ code: 'FIELD_INVALID', details: { rule: 'NO_MESSAGE_FORMAT' } })
  })
})
