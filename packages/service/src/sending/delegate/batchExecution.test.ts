import { describe, expect, it } from 'vitest'
import { batchExecutionDigest, batchExecutionTypedData, encodeExecuteBatch } from './batchExecution.ts'

const account = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
const to = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC'
const base = { chainId: 31337n, account, nonce: 0n, deadline: 1_900_000_000n }

describe('batch execution', () => {
  it('is JSON typed data with lower-case addresses and decimal integers', () => {
    const typed = batchExecutionTypedData({ ...base, calls: [{ to, value: 10n ** 18n, data: '0xA9059CBB' }] })
    expect({ domain: typed.domain, message: typed.message, primaryType: typed.primaryType }).toEqual({
      primaryType: 'BatchExecution',
      domain: {
        name: 'LatchkeyDelegate',
        version: '1',
        chainId: '31337',
        verifyingContract: account.toLowerCase(),
      },
      message: {
        calls: [{ to: to.toLowerCase(), value: '1000000000000000000', data: '0xa9059cbb' }],
        nonce: '0',
        deadline: '1900000000',
      },
    })
  })

  it('binds the digest to every field', () => {
    const calls = [{ to, value: 0n, data: '0x' }]
    const digests = [
      batchExecutionDigest({ ...base, calls }),
      batchExecutionDigest({ ...base, calls, chainId: 1n }),
      batchExecutionDigest({ ...base, calls, account: to }),
      batchExecutionDigest({ ...base, calls, nonce: 1n }),
      batchExecutionDigest({ ...base, calls, deadline: 1n }),
      batchExecutionDigest({ ...base, calls: [{ to, value: 1n, data: '0x' }] }),
      batchExecutionDigest({ ...base, calls: [{ to, value: 0n, data: '0x00' }] }),
      batchExecutionDigest({ ...base, calls: [{ to: account, value: 0n, data: '0x' }] }),
      batchExecutionDigest({ ...base, calls: [...calls, ...calls] }),
      batchExecutionDigest({ ...base, calls: [] }),
    ].map((digest) => Buffer.from(digest).toString('hex'))
    expect(new Set(digests).size).toBe(digests.length)
  })

  it('refuses bad input naming the field', () => {
    const call = { to, value: 0n, data: '0x' }
    const cases: [() => unknown, string][] = [
      [() => batchExecutionDigest({ ...base, calls: [call, { ...call, to: '0x1234' }] }), 'calls[1].to'],
      [() => batchExecutionDigest({ ...base, calls: [{ ...call, value: -1n }] }), 'calls[0].value'],
      [() => batchExecutionDigest({ ...base, calls: [{ ...call, value: 1n << 256n }] }), 'calls[0].value'],
      [() => batchExecutionDigest({ ...base, calls: [{ ...call, data: '0xabc' }] }), 'calls[0].data'],
      [() => batchExecutionDigest({ ...base, calls: [{ ...call, data: 'abcd' }] }), 'calls[0].data'],
      [() => batchExecutionTypedData({ ...base, account: 'me', calls: [call] }), 'account'],
      [() => batchExecutionTypedData({ ...base, deadline: -5n, calls: [call] }), 'deadline'],
      [() => encodeExecuteBatch({ ...base, calls: [call], signature: `0x${'11'.repeat(64)}` }), 'signature'],
      [() => encodeExecuteBatch({ ...base, calls: [call], signature: '0xzz' }), 'signature'],
    ]
    for (const [run, field] of cases)
      expect(run, field).toThrow(expect.objectContaining({ errorCode: 'FIELD_INVALID', field }))
  })
})
