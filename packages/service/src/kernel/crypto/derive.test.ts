import { randomBytes } from 'node:crypto'
import type { AccountSpec } from '@latchkey/protocol'
import { ed25519 } from '@noble/curves/ed25519.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { HDKey } from '@scure/bip32'
import * as bip39 from '@scure/bip39'
import { wordlist as english } from '@scure/bip39/wordlists/english.js'
import { privateKeyToAddress } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { deriveAccount, deriveSecp256k1, validateAccountSpec } from './derive.ts'
import { generateMnemonic, mnemonicToSeed, validateMnemonic } from './mnemonic.ts'
import { formatPath, parsePath } from './path.ts'
import { HARDENED_OFFSET, slip10Ed25519Derive } from './slip10.ts'

/** The BIP-39 reference mnemonic used by BIP-44/49/84/86, SEP-0005 and most SDK tests. */
const ABANDON_MNEMONIC =
  'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about'
/** PBKDF2 is the slow part of derivation: compute the seed once per file. */
const ABANDON_SEED = mnemonicToSeed(ABANDON_MNEMONIC)
const abandonSeedOnce = () => ABANDON_SEED

const ETH: AccountSpec = {
  curve: 'CURVE_SECP256K1',
  pathFormat: 'PATH_FORMAT_BIP32',
  path: "m/44'/60'/0'/0/0",
  addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
}

describe('mnemonics', () => {
  it.each([12, 15, 18, 21, 24])('generates valid %i-word mnemonics', (length) => {
    const mnemonic = generateMnemonic(length)
    expect(mnemonic.split(' ')).toHaveLength(length)
    expect(validateMnemonic(mnemonic)).toBe(true)
  })

  it('refuses other lengths with field mnemonicLength', () => {
    for (const length of [0, 11, 13, 25, 12.5, Number.NaN])
      expect(() => generateMnemonic(length)).toThrow(
        expect.objectContaining({ name: 'CryptoInputError', field: 'mnemonicLength' }),
      )
  })

  it('validates checksums and tolerates whitespace/case', () => {
    expect(validateMnemonic('abandon '.repeat(11) + 'about')).toBe(true)
    expect(
      validateMnemonic(
        '  Abandon\nabandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about ',
      ),
    ).toBe(true)
    expect(validateMnemonic('abandon '.repeat(12).trim())).toBe(false)
    expect(validateMnemonic('not a mnemonic')).toBe(false)
  })

  it('answers as @scure/bip39 does: every length, a changed word, a wrong checksum, unknown words', () => {
    const cases: string[] = []
    for (const length of [12, 15, 18, 21, 24])
      for (let i = 0; i < 8; i++) {
        const words = bip39.generateMnemonic(english, (length / 3) * 32).split(' ')
        cases.push(words.join(' '))
        // One word swapped for another: the checksum almost always fails, sometimes not.
        const changed = [...words]
        changed[i % length] = english[(english.indexOf(changed[i % length]!) + 1 + i) % 2048]!
        cases.push(changed.join(' '))
        cases.push([...words.slice(0, -1), 'zzz'].join(' '), words.slice(1).join(' '))
      }
    cases.push('', 'abandon', `${'zoo '.repeat(23)}vote`, `${'abandon '.repeat(26)}about`)
    for (const mnemonic of cases)
      expect([mnemonic, validateMnemonic(mnemonic)]).toEqual([
        mnemonic,
        bip39.validateMnemonic(mnemonic, english),
      ])
    expect(cases.filter((mnemonic) => validateMnemonic(mnemonic)).length).toBeGreaterThan(40)
  })

  it('computes the BIP-39 seed of the reference vector (TREZOR vectors, empty passphrase)', () => {
    // BIP-39 reference: "abandon…about" with empty passphrase.
    expect(bytesToHex(abandonSeedOnce())).toBe(
      '5eb00bbddcf069084889a8ab9155568165f5c453ccb85e70811aaed6f6da5fc19a5ac40b389cd370d086206dec8aa6c43daea6690f20ad3d8d48b2d2ce9e38e4',
    )
    expect(() => mnemonicToSeed('abandon abandon')).toThrow(expect.objectContaining({ field: 'mnemonic' }))
  })
})

describe('BIP-32 secp256k1 (private derivation only)', () => {
  it('derives what @scure/bip32 derives, for random seeds and paths', () => {
    for (let i = 0; i < 8; i++) {
      const seed = new Uint8Array(randomBytes(16 + (i % 49)))
      const segments = Array.from({ length: 1 + (i % 6) }, (_, j) => ({
        index: (i * 7919 + j * 104729) % 2 ** 31,
        hardened: (i + j) % 3 !== 0,
      }))
      const expected = HDKey.fromMasterSeed(seed).derive(formatPath(segments))
      const derived = deriveSecp256k1(seed, segments)
      expect(bytesToHex(derived.privateKey)).toBe(bytesToHex(expected.privateKey!))
      expect(bytesToHex(derived.publicKey)).toBe(bytesToHex(expected.publicKey!))
      // The point it keeps for the address is the key's own.
      expect(bytesToHex(derived.point.toBytes(true))).toBe(bytesToHex(expected.publicKey!))
    }
  })

  it("gives each account the address viem computes from its private key (the point's uncompressed form)", () => {
    for (let i = 0; i < 8; i++) {
      const seed = new Uint8Array(randomBytes(64))
      const account = deriveAccount(seed, { ...ETH, path: `m/44'/60'/0'/0/${i}` })
      expect(account.address).toBe(privateKeyToAddress(`0x${bytesToHex(account.privateKey)}`))
    }
  })

  it('gives the BIP-44 reference address of "abandon … about"', () => {
    expect(deriveAccount(ABANDON_SEED, ETH).address).toBe('0x9858EfFD232B4033E47d90003D41EC34EcaEda94')
  })
})

describe('SLIP-10 ed25519 (SLIP-0010 test vectors)', () => {
  const H = HARDENED_OFFSET
  it('vector 1', () => {
    const seed = hexToBytes('000102030405060708090a0b0c0d0e0f')
    const rows: [number[], string, string, string][] = [
      [
        [],
        '90046a93de5380a72b5e45010748567d5ea02bbf6522f979e05c0d8d8ca9fffb',
        '2b4be7f19ee27bbf30c667b642d5f4aa69fd169872f8fc3059c08ebae2eb19e7',
        'a4b2856bfec510abab89753fac1ac0e1112364e7d250545963f135f2a33188ed',
      ],
      [
        [0],
        '8b59aa11380b624e81507a27fedda59fea6d0b779a778918a2fd3590e16e9c69',
        '68e0fe46dfb67e368c75379acec591dad19df3cde26e63b93a8e704f1dade7a3',
        '8c8a13df77a28f3445213a0f432fde644acaa215fc72dcdf300d5efaa85d350c',
      ],
      [
        [0, 1],
        'a320425f77d1b5c2505a6b1b27382b37368ee640e3557c315416801243552f14',
        'b1d0bad404bf35da785a64ca1ac54b2617211d2777696fbffaf208f746ae84f2',
        '1932a5270f335bed617d5b935c80aedb1a35bd9fc1e31acafd5372c30f5c1187',
      ],
      [
        [0, 1, 2],
        '2e69929e00b5ab250f49c3fb1c12f252de4fed2c1db88387094a0f8c4c9ccd6c',
        '92a5b23c0b8a99e37d07df3fb9966917f5d06e02ddbd909c7e184371463e9fc9',
        'ae98736566d30ed0e9d2f4486a64bc95740d89c7db33f52121f8ea8f76ff0fc1',
      ],
      [
        [0, 1, 2, 2],
        '8f6d87f93d750e0efccda017d662a1b31a266e4a6f5993b15f5c1f07f74dd5cc',
        '30d1dc7e5fc04c31219ab25a27ae00b50f6fd66622f6e9c913253d6511d1e662',
        '8abae2d66361c879b900d204ad2cc4984fa2aa344dd7ddc46007329ac76c429c',
      ],
      [
        [0, 1, 2, 2, 1000000000],
        '68789923a0cac2cd5a29172a475fe9e0fb14cd6adb5ad98a3fa70333e7afa230',
        '8f94d394a8e8fd6b1bc2f3f49f5c47e385281d5c17e65324b0f62483e37e8793',
        '3c24da049451555d51a7014a37337aa4e12d41e485abccfa46b47dfb2af54b7a',
      ],
    ]
    for (const [path, chainCode, privateKey, publicKey] of rows) {
      const node = slip10Ed25519Derive(
        seed,
        path.map((i) => i + H),
      )
      expect({
        chainCode: bytesToHex(node.chainCode),
        privateKey: bytesToHex(node.privateKey),
        publicKey: bytesToHex(ed25519.getPublicKey(node.privateKey)),
      }).toEqual({ chainCode, privateKey, publicKey })
    }
  })

  it('vector 2', () => {
    const seed = hexToBytes(
      'fffcf9f6f3f0edeae7e4e1dedbd8d5d2cfccc9c6c3c0bdbab7b4b1aeaba8a5a29f9c999693908d8a8784817e7b7875726f6c696663605d5a5754514e4b484542',
    )
    expect(bytesToHex(slip10Ed25519Derive(seed, []).privateKey)).toBe(
      '171cb88b1b3c1db25add599712e36245d75bc65a1a5c9e18d76f9f2b1eab4012',
    )
    const node = slip10Ed25519Derive(seed, [0 + H])
    expect(bytesToHex(node.chainCode)).toBe(
      '0b78a3226f915c082bf118f83618a618ab6dec793752624cbeb622acb562862d',
    )
    expect(bytesToHex(node.privateKey)).toBe(
      '1559eb2bbec5790b0c65d8693e4d0875b1747f4970ae8b650486ed7470845635',
    )
  })

  it('refuses non-hardened indices', () => {
    expect(() => slip10Ed25519Derive(new Uint8Array(16), [1])).toThrow(
      expect.objectContaining({ field: 'path' }),
    )
  })
})

describe('deriveAccount', () => {
  it('returns the address, compressed public key and private key (BIP-44 Ethereum vector)', () => {
    const account = deriveAccount(abandonSeedOnce(), ETH)
    expect({ ...account, privateKey: bytesToHex(account.privateKey) }).toEqual({
      address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94',
      publicKey: '0237b0bb7a8288d38ed49a524b5dc98cff3eb5ca824c9f9dc0dfdb3d9cd600f299',
      privateKey: '1ab42cc412b618bdea3a599e3c9bae199ebf030895b039e9db1e30dafb12b727',
    })
  })

  it("accepts 'h' and 'H' hardened markers like '", () => {
    const a = deriveAccount(abandonSeedOnce(), { ...ETH, path: 'm/44h/60h/0h/0/0' })
    expect(a.address).toBe('0x9858EfFD232B4033E47d90003D41EC34EcaEda94')
  })

  it.each([
    ['', 'path'],
    ["44'/60'", 'path'],
    ["m/44'/60'/x", 'path'],
    ["m/44''/60'", 'path'],
    ['m/2147483648', 'path'],
    ["m/44'/-1", 'path'],
    ["m//0'", 'path'],
  ])('refuses path %j', (path, field) => {
    expect(() => deriveAccount(abandonSeedOnce(), { ...ETH, path })).toThrow(
      expect.objectContaining({ name: 'CryptoInputError', field }),
    )
  })

  it('refuses non-hardened ed25519 paths, bad curves, bad path formats and incompatible formats', () => {
    const seed = abandonSeedOnce()
    expect(() =>
      deriveAccount(seed, {
        ...ETH,
        curve: 'CURVE_ED25519',
        addressFormat: 'ADDRESS_FORMAT_SOLANA',
        path: "m/44'/501'/0'/0",
      }),
    ).toThrow(expect.objectContaining({ field: 'path' }))
    expect(() => deriveAccount(seed, { ...ETH, curve: 'CURVE_P256' as never })).toThrow(
      expect.objectContaining({ field: 'curve' }),
    )
    expect(() => deriveAccount(seed, { ...ETH, pathFormat: 'PATH_FORMAT_X' as never })).toThrow(
      expect.objectContaining({ field: 'pathFormat' }),
    )
    expect(() => deriveAccount(seed, { ...ETH, curve: 'CURVE_ED25519', path: "m/44'/60'/0'" })).toThrow(
      expect.objectContaining({ field: 'addressFormat' }),
    )
    expect(() => validateAccountSpec({ ...ETH, addressFormat: 'ADDRESS_FORMAT_SOLANA' })).toThrow(
      expect.objectContaining({ field: 'addressFormat' }),
    )
  })

  it('parses paths into indices', () => {
    expect(parsePath("m/44'/0h/1")).toEqual([
      { index: 44, hardened: true },
      { index: 0, hardened: true },
      { index: 1, hardened: false },
    ])
    expect(parsePath('m')).toEqual([])
  })
})
