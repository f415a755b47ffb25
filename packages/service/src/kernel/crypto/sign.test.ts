import { ed25519 } from '@noble/curves/ed25519.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { addr, authorization } from 'micro-eth-signer'
import { describe, expect, it } from 'vitest'
import { addressFromPublicKey } from './addresses.ts'
import { deriveAccount } from './derive.ts'
import { mnemonicToSeed } from './mnemonic.ts'
import { signRawPayload, verifyRawSignature } from './sign.ts'

/** The BIP-39 reference mnemonic used by BIP-44/49/84/86, SEP-0005 and most SDK tests. */
const ABANDON_MNEMONIC =
  'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about'
/** PBKDF2 is the slow part of derivation: compute the seed once per file. */
const ABANDON_SEED = mnemonicToSeed(ABANDON_MNEMONIC)
const abandonSeedOnce = () => ABANDON_SEED

/** EIP-712 spec "Mail" example (eips.ethereum.org/EIPS/eip-712, assets/eip-712/Example.js). */
const MAIL = JSON.stringify({
  types: {
    EIP712Domain: [
      { name: 'name', type: 'string' },
      { name: 'version', type: 'string' },
      { name: 'chainId', type: 'uint256' },
      { name: 'verifyingContract', type: 'address' },
    ],
    Person: [
      { name: 'name', type: 'string' },
      { name: 'wallet', type: 'address' },
    ],
    Mail: [
      { name: 'from', type: 'Person' },
      { name: 'to', type: 'Person' },
      { name: 'contents', type: 'string' },
    ],
  },
  primaryType: 'Mail',
  domain: {
    name: 'Ether Mail',
    version: '1',
    chainId: 1,
    verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC',
  },
  message: {
    from: { name: 'Cow', wallet: '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826' },
    to: { name: 'Bob', wallet: '0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB' },
    contents: 'Hello, Bob!',
  },
})
const MAIL_DIGEST = hexToBytes('be609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2')
const COW_KEY = keccak_256(utf8ToBytes('cow'))

const eth = () =>
  deriveAccount(abandonSeedOnce(), {
    curve: 'CURVE_SECP256K1',
    pathFormat: 'PATH_FORMAT_BIP32',
    path: "m/44'/60'/0'/0/0",
    addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
  })
const sol = () =>
  deriveAccount(abandonSeedOnce(), {
    curve: 'CURVE_ED25519',
    pathFormat: 'PATH_FORMAT_BIP32',
    path: "m/44'/501'/0'/0'",
    addressFormat: 'ADDRESS_FORMAT_SOLANA',
  })

function recoverAddress(sig: { r: string; s: string; v: string }, digest: Uint8Array): string {
  const recovered = secp256k1.recoverPublicKey(hexToBytes(sig.v + sig.r + sig.s), digest, { prehash: false })
  return addressFromPublicKey('ADDRESS_FORMAT_ETHEREUM', recovered)
}

describe('signRawPayload secp256k1', () => {
  it.each([
    [
      'HASH_FUNCTION_KECCAK256',
      'PAYLOAD_ENCODING_HEXADECIMAL',
      '0xdeadbeef',
      keccak_256(hexToBytes('deadbeef')),
    ],
    ['HASH_FUNCTION_SHA256', 'PAYLOAD_ENCODING_HEXADECIMAL', 'DEADBEEF', sha256(hexToBytes('deadbeef'))],
    ['HASH_FUNCTION_KECCAK256', 'PAYLOAD_ENCODING_TEXT_UTF8', 'héllo', keccak_256(utf8ToBytes('héllo'))],
    ['HASH_FUNCTION_NO_OP', 'PAYLOAD_ENCODING_HEXADECIMAL', '11'.repeat(32), hexToBytes('11'.repeat(32))],
  ] as const)(
    '%s %s: verifies with noble and recovers to the account address',
    (hashFunction, encoding, payload, digest) => {
      const account = eth()
      const sig = signRawPayload({
        curve: 'CURVE_SECP256K1',
        privateKey: account.privateKey,
        payload,
        encoding,
        hashFunction,
      })
      expect(sig.r).toMatch(/^[0-9a-f]{64}$/)
      expect(sig.s).toMatch(/^[0-9a-f]{64}$/)
      expect(['00', '01']).toContain(sig.v)
      expect(BigInt('0x' + sig.s) <= secp256k1.Point.CURVE().n / 2n).toBe(true)
      expect(
        secp256k1.verify(hexToBytes(sig.r + sig.s), digest, hexToBytes(account.publicKey), {
          prehash: false,
        }),
      ).toBe(true)
      expect(recoverAddress(sig, digest)).toBe(account.address)
      const publicKey = hexToBytes(account.publicKey)
      expect(
        verifyRawSignature({
          curve: 'CURVE_SECP256K1',
          publicKey,
          payload,
          encoding,
          hashFunction,
          signature: sig,
        }),
      ).toBe(true)
      const flipped = { ...sig, v: sig.v === '00' ? '01' : '00' }
      expect(
        verifyRawSignature({
          curve: 'CURVE_SECP256K1',
          publicKey,
          payload,
          encoding,
          hashFunction,
          signature: flipped,
        }),
      ).toBe(false)
    },
  )

  it('is deterministic (RFC 6979)', () => {
    const account = eth()
    const input = {
      curve: 'CURVE_SECP256K1' as const,
      privateKey: account.privateKey,
      payload: 'ab',
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL' as const,
      hashFunction: 'HASH_FUNCTION_KECCAK256' as const,
    }
    expect(signRawPayload(input)).toEqual(signRawPayload(input))
  })

  it('EIP-712: the spec Mail example gives the spec signature over digest be609aee…', () => {
    const sig = signRawPayload({
      curve: 'CURVE_SECP256K1',
      privateKey: COW_KEY,
      payload: MAIL,
      encoding: 'PAYLOAD_ENCODING_EIP712',
      hashFunction: 'HASH_FUNCTION_KECCAK256',
    })
    // Signature published with the EIP-712 example (v = 28 → recovery bit 1).
    expect(sig).toEqual({
      r: '4355c47d63924e8a72e509b65029052eb6c299d53a04e167c5775fd466751c9d',
      s: '07299936d304c153f6443dfa05f40ff007d72911b6f72307f996231605b91562',
      v: '01',
    })
    expect(
      secp256k1.verify(hexToBytes(sig.r + sig.s), MAIL_DIGEST, secp256k1.getPublicKey(COW_KEY), {
        prehash: false,
      }),
    ).toBe(true)
    expect(recoverAddress(sig, MAIL_DIGEST)).toBe('0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826')
    const publicKey = secp256k1.getPublicKey(COW_KEY)
    const base = {
      curve: 'CURVE_SECP256K1' as const,
      publicKey,
      encoding: 'PAYLOAD_ENCODING_EIP712' as const,
    }
    expect(
      verifyRawSignature({
        ...base,
        payload: MAIL,
        hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
        signature: sig,
      }),
    ).toBe(true)
    expect(
      verifyRawSignature({
        ...base,
        payload: MAIL.replace('Hello, Bob!', 'Hello, Eve!'),
        hashFunction: 'HASH_FUNCTION_KECCAK256',
        signature: sig,
      }),
    ).toBe(false)
  })

  it('EIP-7702: signs keccak256(0x05 ‖ rlp([chainId, address, nonce])) and micro-eth-signer recovers the authority', () => {
    const account = eth()
    const request = { chainId: 1n, address: '0x000000000000000000000000000000000000dEaD', nonce: 7n }
    const sig = signRawPayload({
      curve: 'CURVE_SECP256K1',
      privateKey: account.privateKey,
      payload: JSON.stringify({ chainId: 1, address: request.address, nonce: '7' }),
      encoding: 'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION',
      hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
    })
    // Independent digest: 0x05 ‖ RLP list of [0x01, 0x94 ‖ address, 0x07].
    const rlp = concatBytes(
      new Uint8Array([0xd7, 0x01, 0x94]),
      hexToBytes(request.address.slice(2).toLowerCase()),
      new Uint8Array([0x07]),
    )
    const digest = keccak_256(concatBytes(new Uint8Array([0x05]), rlp))
    expect(bytesToHex(digest)).toBe(bytesToHex(authorization.getHash(request)))
    expect(recoverAddress(sig, digest)).toBe(account.address)
    const item = {
      ...request,
      address: request.address.toLowerCase(),
      yParity: Number(sig.v),
      r: BigInt('0x' + sig.r),
      s: BigInt('0x' + sig.s),
    }
    expect(authorization.getAuthority(item)).toBe(account.address)
  })

  it.each([
    ['HASH_FUNCTION_NO_OP', 'PAYLOAD_ENCODING_HEXADECIMAL', 'abcd', 'payloads'],
    ['HASH_FUNCTION_NOT_APPLICABLE', 'PAYLOAD_ENCODING_HEXADECIMAL', 'abcd', 'hashFunction'],
    ['HASH_FUNCTION_SHA256', 'PAYLOAD_ENCODING_HEXADECIMAL', 'xyz', 'payloads'],
    ['HASH_FUNCTION_SHA256', 'PAYLOAD_ENCODING_HEXADECIMAL', 'abc', 'payloads'],
    ['HASH_FUNCTION_SHA256', 'PAYLOAD_ENCODING_EIP712', MAIL, 'hashFunction'],
    ['HASH_FUNCTION_KECCAK256', 'PAYLOAD_ENCODING_EIP712', '{"types":{}}', 'payloads'],
    ['HASH_FUNCTION_KECCAK256', 'PAYLOAD_ENCODING_EIP712', 'not json', 'payloads'],
    // Type names an object's prototype has, and type lists that are not lists: refused, not a 500.
    ...[
      '{"types":{"M":[{"name":"a","type":"toString"}]},"primaryType":"M","domain":{},"message":{"a":{}}}',
      '{"types":{},"primaryType":"constructor","domain":{},"message":{}}',
      '{"types":{"M":5},"primaryType":"M","domain":{},"message":{}}',
      '{"types":{"M":[null]},"primaryType":"M","domain":{},"message":{}}',
      '{"types":{"EIP712Domain":{"name":"x"},"M":[]},"primaryType":"M","domain":{},"message":{}}',
    ].map((payload) => ['HASH_FUNCTION_KECCAK256', 'PAYLOAD_ENCODING_EIP712', payload, 'payloads'] as const),
    [
      'HASH_FUNCTION_KECCAK256',
      'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION',
      '{"chainId":1,"address":"0x12","nonce":0}',
      'payloads',
    ],
    [
      'HASH_FUNCTION_KECCAK256',
      'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION',
      '{"chainId":-1,"address":"0x000000000000000000000000000000000000dEaD","nonce":0}',
      'payloads',
    ],
    ['HASH_FUNCTION_MD5', 'PAYLOAD_ENCODING_HEXADECIMAL', 'ab', 'hashFunction'],
    ['HASH_FUNCTION_SHA256', 'PAYLOAD_ENCODING_BASE64', 'ab', 'encoding'],
  ] as const)('%s %s %j → CryptoInputError(%s)', (hashFunction, encoding, payload, field) => {
    expect(() =>
      signRawPayload({
        curve: 'CURVE_SECP256K1',
        privateKey: eth().privateKey,
        payload,
        encoding: encoding as never,
        hashFunction: hashFunction as never,
      }),
    ).toThrow(expect.objectContaining({ name: 'CryptoInputError', field }))
  })
})

describe('signRawPayload ed25519', () => {
  it('signs the raw payload bytes; r‖s is the 64-byte signature, v = 00', () => {
    const account = sol()
    for (const [encoding, payload, bytes] of [
      ['PAYLOAD_ENCODING_HEXADECIMAL', '0x0102ff', hexToBytes('0102ff')],
      ['PAYLOAD_ENCODING_TEXT_UTF8', 'hello solana', utf8ToBytes('hello solana')],
    ] as const) {
      const sig = signRawPayload({
        curve: 'CURVE_ED25519',
        privateKey: account.privateKey,
        payload,
        encoding,
        hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
      })
      expect(sig.v).toBe('00')
      expect(bytesToHex(ed25519.sign(bytes, account.privateKey))).toBe(sig.r + sig.s)
      expect(ed25519.verify(hexToBytes(sig.r + sig.s), bytes, hexToBytes(account.publicKey))).toBe(true)
      const publicKey = hexToBytes(account.publicKey)
      const common = {
        curve: 'CURVE_ED25519' as const,
        publicKey,
        encoding,
        hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE' as const,
      }
      expect(verifyRawSignature({ ...common, payload, signature: sig })).toBe(true)
      expect(verifyRawSignature({ ...common, payload, signature: { ...sig, r: sig.s, s: sig.r } })).toBe(
        false,
      )
    }
  })

  it('needs HASH_FUNCTION_NOT_APPLICABLE and byte encodings', () => {
    const base = { curve: 'CURVE_ED25519' as const, privateKey: sol().privateKey, payload: 'ab' }
    expect(() =>
      signRawPayload({
        ...base,
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_SHA256',
      }),
    ).toThrow(expect.objectContaining({ field: 'hashFunction' }))
    expect(() =>
      signRawPayload({
        ...base,
        payload: MAIL,
        encoding: 'PAYLOAD_ENCODING_EIP712',
        hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
      }),
    ).toThrow(expect.objectContaining({ field: 'encoding' }))
  })
})

it('the EIP-712 cow key is the spec signer', () => {
  expect(addr.fromPrivateKey(COW_KEY)).toBe('0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826')
})
