import { ed25519 } from '@noble/curves/ed25519.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { base58 } from '@scure/base'
import { HDKey } from '@scure/bip32'
import { mnemonicToSeedSync } from '@scure/bip39'
import { beforeEach, describe, expect, it } from 'vitest'
import { type ClientFixture, createClientFixture } from '../../test/fixtures.ts'
import { getWalletAccounts } from '../queries/getWalletAccounts.ts'
import { getWallets } from '../queries/getWallets.ts'
import { createWallet } from './createWallet.ts'
import { createWalletAccounts } from './createWalletAccounts.ts'
import { deleteWallets } from './deleteWallets.ts'
import { exportWallet } from './exportWallet.ts'
import { exportWalletAccount } from './exportWalletAccount.ts'
import { importWallet } from './importWallet.ts'
import { signMessage } from './signMessage.ts'
import { signTypedData } from './signTypedData.ts'

const ethAddressOfPublicKey = (uncompressed: Uint8Array) =>
  `0x${bytesToHex(keccak_256(uncompressed.subarray(1)).subarray(12))}`

const recoverPersonalSign = (message: string, signature: string) => {
  const bytes = hexToBytes(signature.slice(2))
  const prefix = utf8ToBytes(`\x19Ethereum Signed Message:\n${utf8ToBytes(message).length}`)
  const hash = keccak_256(new Uint8Array([...prefix, ...utf8ToBytes(message)]))
  const point = secp256k1.Signature.fromBytes(bytes.subarray(0, 64), 'compact')
    .addRecoveryBit((bytes[64] as number) - 27)
    .recoverPublicKey(hash)
  return ethAddressOfPublicKey(point.toBytes(false))
}

describe('wallet actions against the local service', () => {
  let fx: ClientFixture
  beforeEach(async () => {
    fx = await createClientFixture()
    await fx.signUpDirect()
  })

  it('creates a wallet for ethereum, solana and bitcoin with conventional paths, then more accounts', async () => {
    const { walletId, addresses } = await createWallet(fx.client, {
      walletName: 'Main',
      chains: ['ethereum', 'solana', 'bitcoin'],
    })
    expect(addresses).toHaveLength(3)
    expect(addresses[0]).toMatch(/^0x[0-9a-fA-F]{40}$/)
    expect(base58.decode(addresses[1] as string)).toHaveLength(32)
    expect(addresses[2]).toMatch(/^bc1q/)
    const { wallets } = await getWallets(fx.client, {})
    expect(wallets.map((w) => w.walletName)).toEqual(['Main'])
    const more = await createWalletAccounts(fx.client, { walletId, chains: ['ethereum'] })
    const { accounts } = await getWalletAccounts(fx.client, { walletId })
    expect(accounts.map((a) => a.path).sort()).toEqual([
      "m/44'/501'/0'/0'",
      "m/44'/60'/0'/0/0",
      "m/44'/60'/1'/0/0",
      "m/84'/0'/0'/0/0",
    ])
    expect(accounts.find((a) => a.path === "m/44'/60'/1'/0/0")?.address).toBe(more.addresses[0])
  })

  it('signs an EIP-191 message whose signature recovers the account address', async () => {
    const { addresses } = await createWallet(fx.client, { walletName: 'Eth', chains: ['ethereum'] })
    const address = addresses[0] as string
    const signed = await signMessage(fx.client, { signWith: address, message: 'hello latchkey' })
    expect(signed.signature).toMatch(/^0x[0-9a-f]{130}$/)
    expect(recoverPersonalSign('hello latchkey', signed.signature)).toBe(address.toLowerCase())
  })

  it('signs raw ed25519 messages for Solana accounts (kind found from the account)', async () => {
    const { addresses } = await createWallet(fx.client, { walletName: 'Sol', chains: ['solana'] })
    const address = addresses[0] as string
    const signed = await signMessage(fx.client, { signWith: address, message: 'gm' })
    expect(ed25519.verify(hexToBytes(signed.signature), utf8ToBytes('gm'), base58.decode(address))).toBe(true)
    // Solana tools take the signature in base58: the same 64 bytes.
    expect(bytesToHex(base58.decode(signed.signatureBase58!))).toBe(signed.signature)
  })

  it('signs EIP-712 typed data', async () => {
    const { addresses } = await createWallet(fx.client, { walletName: 'Eth', chains: ['ethereum'] })
    const signed = await signTypedData(fx.client, {
      signWith: addresses[0] as string,
      typedData: {
        types: {
          EIP712Domain: [
            { name: 'name', type: 'string' },
            { name: 'chainId', type: 'uint256' },
          ],
          Mail: [{ name: 'contents', type: 'string' }],
        },
        primaryType: 'Mail',
        domain: { name: 'Latchkey', chainId: 1 },
        message: { contents: 'Hello' },
      },
    })
    expect(signed.signature).toMatch(/^0x[0-9a-f]{128}(1b|1c)$/)
  })

  it('exports the mnemonic, which re-derives the same addresses, and an account key', async () => {
    const { walletId, addresses } = await createWallet(fx.client, {
      walletName: 'Exp',
      chains: ['ethereum', 'solana'],
    })
    const { mnemonic } = await exportWallet(fx.client, { walletId })
    expect(mnemonic.split(' ')).toHaveLength(12)
    const seed = mnemonicToSeedSync(mnemonic)
    const eth = HDKey.fromMasterSeed(seed).derive("m/44'/60'/0'/0/0")
    expect(ethAddressOfPublicKey(secp256k1.getPublicKey(eth.privateKey as Uint8Array, false))).toBe(
      (addresses[0] as string).toLowerCase(),
    )
    const { privateKey } = await exportWalletAccount(fx.client, { address: addresses[0] as string })
    expect(privateKey).toBe(bytesToHex(eth.privateKey as Uint8Array))
  })

  it('imports a mnemonic to the same addresses, and deletes the wallet', async () => {
    const { walletId, addresses } = await createWallet(fx.client, {
      walletName: 'Orig',
      chains: ['ethereum', 'solana'],
    })
    const { mnemonic } = await exportWallet(fx.client, { walletId })
    const other = await createClientFixture({}, {})
    // Another person (another sub-organization on ANOTHER service instance) imports it.
    await other.signUpDirect()
    const imported = await importWallet(other.client, {
      mnemonic,
      walletName: 'Imported',
      chains: ['ethereum', 'solana'],
    })
    expect(imported.addresses).toEqual(addresses)
    const { walletIds } = await deleteWallets(fx.client, { walletIds: [walletId] })
    expect(walletIds).toEqual([walletId])
  })

  it('refuses a bundle signed by an untrusted key before decrypting anything', async () => {
    const { walletId } = await createWallet(fx.client, { walletName: 'X', chains: ['ethereum'] })
    const wrongTrust = fx.reload({
      trustedSignerPublicKey: bytesToHex(secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), false)),
    })
    await expect(exportWallet(wrongTrust, { walletId })).rejects.toMatchObject({
      code: 'BUNDLE_SIGNATURE_INVALID',
    })
  })
})
