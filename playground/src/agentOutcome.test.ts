import { describe, expect, it } from 'vitest'
import { agentLimitOf, grantOf, refusalWords, runSummary } from './agentOutcome.ts'

describe('refusalWords', () => {
  it('says why a spend was refused in words, its numbers in ETH and its code last', () => {
    const refusal = {
      code: 'SPENDING_LIMIT_EXCEEDED',
      used: '10000000000000000',
      limit: '10000000000000000',
      remaining: '0',
    }
    expect(refusalWords(refusal)).toBe(
      'the allowance is used up (0.01 ETH of 0.01 ETH used, 0 ETH left). SPENDING_LIMIT_EXCEEDED',
    )
    expect(refusalWords({ ...refusal, used: '9000000000000000', remaining: '1000000000000000' })).toBe(
      'this send is more than what is left of the allowance (0.009 ETH of 0.01 ETH used, 0.001 ETH left). SPENDING_LIMIT_EXCEEDED',
    )
  })

  it('gives any other refusal its message and code', () => {
    expect(refusalWords({ code: 'PERMISSION_DENIED', message: 'not allowed' })).toBe(
      'not allowed. PERMISSION_DENIED',
    )
    expect(refusalWords({})).toBe('the service refused it. ERROR')
  })
})

describe('runSummary', () => {
  it('counts the signed sends times the amount', () => {
    expect(runSummary(5, 3, 2_000_000_000_000_000n)).toBe('5 signed, 3 refused: 0.01 ETH spent.')
    expect(runSummary(0, 8, 2_000_000_000_000_000n)).toBe('0 signed, 8 refused: 0 ETH spent.')
  })
})

describe('agentLimitOf', () => {
  it('finds the agent’s own limit by id, not the first key-scoped one', () => {
    const limits = [
      { spendingLimitId: 'earlier', used: '0' },
      { spendingLimitId: 'mine', used: '10' },
    ]
    expect(agentLimitOf(limits, 'mine')?.used).toBe('10')
    expect(agentLimitOf(limits, null)).toBeUndefined()
    expect(agentLimitOf(undefined, 'mine')).toBeUndefined()
  })
})

describe('grantOf', () => {
  const key = (apiKeyId: string, publicKey: string) => ({ apiKeyId, credential: { publicKey } })
  const users = [
    { userId: 'root', apiKeys: [key('k-root', '02aa')] },
    { userId: 'old agent', apiKeys: [key('k-old', '03bb')] },
    { userId: 'agent', apiKeys: [key('k-agent', '02CC')] },
  ]
  const limits = [
    { spendingLimitId: 'l-wallet', scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT' } },
    { spendingLimitId: 'l-old', scope: { type: 'SPENDING_LIMIT_SCOPE_API_KEY', apiKeyId: 'k-old' } },
    { spendingLimitId: 'l-agent', scope: { type: 'SPENDING_LIMIT_SCOPE_API_KEY', apiKeyId: 'k-agent' } },
  ]

  it("finds the user holding the agent's key and the limit scoped to that key", () => {
    expect(grantOf('02cc', users, limits)).toEqual({ userId: 'agent', spendingLimitId: 'l-agent' })
  })

  it('finds nothing for a key no limit is scoped to, or before the lists are read', () => {
    expect(grantOf('02aa', users, limits)).toBeNull()
    expect(grantOf('02dd', users, limits)).toBeNull()
    expect(grantOf('02cc', undefined, limits)).toBeNull()
    expect(grantOf(undefined, users, limits)).toBeNull()
  })
})
