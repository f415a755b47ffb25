import { addr, authorization, Transaction } from 'micro-eth-signer'
import { describe, expect, it } from 'vitest'
import { decodeSignedTransaction } from './transactions.ts'

const KEY = '0x' + '46'.repeat(32)
const FROM = addr.fromPrivateKey(KEY)
const TO = '0xdf90dea0e0bf5ca6d2a7f0cb86874ba6714f463e'

describe('decodeSignedTransaction', () => {
  it.each([
    [
      'legacy',
      { type: 'legacy', to: TO, value: 1n, nonce: 3n, gasPrice: 10n ** 9n, gasLimit: 21000n, chainId: 1n },
    ],
    [
      'eip2930',
      {
        type: 'eip2930',
        to: TO,
        value: 1n,
        nonce: 4n,
        gasPrice: 10n ** 9n,
        gasLimit: 21000n,
        chainId: 5n,
        accessList: [],
      },
    ],
    [
      'eip1559',
      {
        type: 'eip1559',
        to: TO,
        value: 1n,
        nonce: 5n,
        maxFeePerGas: 10n ** 9n,
        maxPriorityFeePerGas: 1n,
        gasLimit: 21000n,
        chainId: 11155111n,
      },
    ],
    [
      'eip7702',
      {
        type: 'eip7702',
        to: TO,
        value: 0n,
        nonce: 6n,
        maxFeePerGas: 10n ** 9n,
        maxPriorityFeePerGas: 1n,
        gasLimit: 60000n,
        chainId: 1n,
        accessList: [],
        authorizationList: [],
      },
    ],
  ] as const)('%s', (type, data) => {
    // The 7702 list must not be empty on the wire; sign a real authorization for it.
    const prepared = type === 'eip7702' ? { ...data, authorizationList: [authorizationFor()] } : data
    const tx = Transaction.prepare(prepared as never).signBy(KEY)
    const hex = tx.toHex()
    expect(decodeSignedTransaction(hex)).toEqual({
      hash: tx.hash,
      from: FROM,
      to: addr.addChecksum(TO),
      nonce: data.nonce,
      chainId: data.chainId,
      type,
    })
    expect(decodeSignedTransaction(hex.replace(/^0x/, '').toUpperCase()).hash).toBe(tx.hash)
  })

  it('refuses non-hex, truncated and non-transaction input', () => {
    for (const hex of ['', 'zz', '0x1234', '0x02', '0x02c0'])
      expect(() => decodeSignedTransaction(hex)).toThrow(
        expect.objectContaining({ name: 'CryptoInputError', field: 'signedTransaction' }),
      )
  })

  it('refuses an unsigned transaction', () => {
    const unsigned = Transaction.prepare({
      to: TO,
      value: 1n,
      nonce: 0n,
      maxFeePerGas: 10n ** 9n,
      chainId: 1n,
    }).toHex({ includeSignature: false })
    expect(() => decodeSignedTransaction(unsigned)).toThrow(
      expect.objectContaining({ field: 'signedTransaction' }),
    )
  })
})

function authorizationFor() {
  return authorization.sign({ chainId: 1n, address: TO, nonce: 7n }, KEY)
}
