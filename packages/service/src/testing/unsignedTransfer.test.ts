import { encodeFunctionData, erc20Abi, type Hex, serializeTransaction } from 'viem'
import { describe, expect, it } from 'vitest'
import { describeTransaction } from '../kernel/spending.ts'
import { DEAD_ADDRESS, unsignedTransfer } from './unsignedTransfer.ts'

// The helper replaced four copies of the same viem builder (the limits tests and bench:service):
// its bytes are viem's, field for field.
const viem = (fields: {
  to: string
  value: bigint
  nonce: number
  chainId: number
  gas: bigint
  data?: Hex
}) =>
  serializeTransaction({
    type: 'eip1559',
    chainId: fields.chainId,
    nonce: fields.nonce,
    maxFeePerGas: 2n * 10n ** 9n,
    maxPriorityFeePerGas: 10n ** 9n,
    gas: fields.gas,
    to: fields.to as Hex,
    value: fields.value,
    ...(fields.data ? { data: fields.data } : {}),
  })

describe('unsignedTransfer', () => {
  it('makes the bytes viem makes of the same fields', () => {
    const transfer = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [DEAD_ADDRESS, 1n] })
    const cases = [
      { to: DEAD_ADDRESS, value: 1n, nonce: 0, chainId: 1, gas: 21_000n },
      { to: '0x000000000000000000000000000000000000dEaD', value: 3n, nonce: 41, chainId: 1, gas: 21_000n },
      { to: DEAD_ADDRESS, value: 10n ** 30n, nonce: 1_000_000, chainId: 31337, gas: 100_000n },
      {
        to: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
        value: 0n,
        nonce: 7,
        chainId: 8453,
        gas: 100_000n,
        data: transfer,
      },
    ]
    for (const fields of cases) expect(unsignedTransfer(fields)).toBe(viem(fields))
    // The defaults: chain 1, 21,000 gas, to 0x…dead.
    expect(unsignedTransfer({ value: 5n, nonce: 2 })).toBe(
      viem({ to: DEAD_ADDRESS, value: 5n, nonce: 2, chainId: 1, gas: 21_000n }),
    )
  })

  it('is what the spend guard reads: one call of `value` wei to `to`, and the most its gas can cost', () => {
    expect(
      describeTransaction('TRANSACTION_TYPE_ETHEREUM', unsignedTransfer({ value: 2n, nonce: 9 })),
    ).toEqual({
      kind: 'evm',
      caip2: 'eip155:1',
      calls: [{ to: DEAD_ADDRESS, value: 2n, data: '0x' }],
      delegates: false,
      fee: 21_000n * 2n * 10n ** 9n,
    })
    // A fee cap of 0: the value is all it can spend.
    expect(
      describeTransaction(
        'TRANSACTION_TYPE_ETHEREUM',
        unsignedTransfer({ value: 2n, nonce: 9, maxFeePerGas: 0n }),
      ),
    ).toMatchObject({ calls: [{ value: 2n }], fee: 0n })
  })
})
