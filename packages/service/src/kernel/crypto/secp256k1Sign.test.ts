import { secp256k1 } from '@noble/curves/secp256k1.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { authorization, Transaction } from 'micro-eth-signer'
import { describe, expect, it } from 'vitest'
import { secp256k1Signer, signDigest } from './secp256k1Sign.ts'
import { signTransaction } from './signTransaction.ts'

const N = secp256k1.Point.CURVE().n

/** A deterministic stream of 32-byte values (keccak of a counter), so a failure can be replayed. */
const bytes32 = (label: string, i: number) => keccak_256(utf8ToBytes(`${label}:${i}`))

const noble = (digest: Uint8Array, key: Uint8Array) =>
  secp256k1.sign(digest, key, { prehash: false, lowS: true, format: 'recovered' })

describe('signDigest (libsecp256k1)', () => {
  it('is libsecp256k1 on Node (noble only where the service runs in a page)', () => {
    expect(secp256k1Signer).toBe('libsecp256k1')
  })

  it('signs exactly as noble does: RFC 6979 nonces, low s, the same recovery byte', () => {
    for (let i = 0; i < 500; i++) {
      const key = bytes32('key', i)
      const digest = bytes32('digest', i)
      expect(bytesToHex(signDigest(digest, key)), `vector ${i}`).toBe(bytesToHex(noble(digest, key)))
    }
  })

  it('agrees at the edges: the largest key, a digest above the curve order, an all-zero digest', () => {
    const largest = hexToBytes((N - 1n).toString(16).padStart(64, '0'))
    const aboveOrder = hexToBytes('ff'.repeat(32))
    for (const [key, digest] of [
      [largest, bytes32('digest', 1)],
      [bytes32('key', 1), aboveOrder],
      [bytes32('key', 2), new Uint8Array(32)],
      [hexToBytes('00'.repeat(31) + '01'), bytes32('digest', 2)],
    ] as const)
      expect(bytesToHex(signDigest(digest, key))).toBe(bytesToHex(noble(digest, key)))
  })

  it('recovers to the signing key', () => {
    const key = bytes32('key', 7)
    const digest = bytes32('digest', 7)
    const recovered = signDigest(digest, key)
    const signature = secp256k1.Signature.fromBytes(recovered, 'recovered')
    expect(signature.recoverPublicKey(digest).toHex(true)).toBe(bytesToHex(secp256k1.getPublicKey(key, true)))
    // Low s: never above half the order.
    expect(signature.s <= N / 2n).toBe(true)
  })

  it('refuses a key that is not a secp256k1 private key, and a digest that is not 32 bytes', () => {
    expect(() => signDigest(bytes32('digest', 0), new Uint8Array(32))).toThrow()
    expect(() => signDigest(bytes32('digest', 0), hexToBytes(N.toString(16)))).toThrow()
    expect(() => signDigest(new Uint8Array(31), bytes32('key', 0))).toThrow()
  })
})

describe('sign_transaction with libsecp256k1', () => {
  const TO = '0xdf90dea0e0bf5ca6d2a7f0cb86874ba6714f463e'
  const fees = { maxFeePerGas: 10n ** 9n, maxPriorityFeePerGas: 1n }
  const shapes = {
    legacy: {
      type: 'legacy',
      to: TO,
      value: 1n,
      nonce: 3n,
      gasPrice: 10n ** 9n,
      gasLimit: 21000n,
      chainId: 1n,
    },
    eip2930: {
      type: 'eip2930',
      to: TO,
      value: 1n,
      nonce: 4n,
      gasPrice: 10n ** 9n,
      gasLimit: 30000n,
      chainId: 5n,
      accessList: [{ address: TO, storageKeys: [`0x${'01'.repeat(32)}`] }],
    },
    eip1559: {
      type: 'eip1559',
      to: TO,
      value: 10n ** 18n,
      nonce: 5n,
      gasLimit: 21000n,
      chainId: 8453n,
      data: '0xa9059cbb',
      ...fees,
    },
    eip7702: {
      type: 'eip7702',
      to: TO,
      value: 0n,
      nonce: 6n,
      gasLimit: 60000n,
      chainId: 1n,
      accessList: [],
      ...fees,
    },
  } as const

  it.each(Object.keys(shapes) as (keyof typeof shapes)[])(
    '%s: the transaction micro-eth-signer signs deterministically',
    (type) => {
      for (let i = 0; i < 20; i++) {
        const key = bytes32('tx-key', i)
        const data =
          type === 'eip7702'
            ? {
                ...shapes[type],
                authorizationList: [authorization.sign({ chainId: 1n, address: TO, nonce: 0n }, key)],
              }
            : shapes[type]
        const unsigned = Transaction.prepare({ ...data, nonce: data.nonce + BigInt(i) } as never, false)
        const signed = signTransaction({
          type: 'TRANSACTION_TYPE_ETHEREUM',
          unsignedTransaction: unsigned.toHex(),
          privateKey: key,
        })
        expect(signed, `${type} ${i}`).toBe(unsigned.signBy(key, false).toHex().replace(/^0x/, ''))
        expect(Transaction.fromHex(`0x${signed}`).sender).toBe(
          Transaction.fromHex(unsigned.signBy(key).toHex()).sender,
        )
      }
    },
  )
})
