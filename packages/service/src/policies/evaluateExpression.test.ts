import { describe, expect, it } from 'vitest'
import {
  evaluateExpression,
  PolicyRuntimeError,
  type PolicyScope,
  PolicyStepLimitError,
} from './evaluateExpression.ts'
import { CONDITION_KEYWORDS, CONSENSUS_KEYWORDS, parsePolicy } from './parsePolicy.ts'
import { eip712Of, eip7702Of, toPolicyValue } from './policyContextOf.ts'

const MAX_U256 = 2n ** 256n - 1n
const TO = '0x1111111111111111111111111111111111111111'

const scope: PolicyScope = {
  activity: {
    id: 'a1',
    type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
    kind: 'sign_transaction',
    resource: 'WALLET',
    action: 'SIGN',
    params: { signWith: '0xabc', labels: { env: 'prod' } },
  },
  wallet: { id: 'w1', label: 'Treasury', exported: false, imported: true },
  wallet_account: { address: '0xabc' },
  eth: {
    tx: {
      from: '0xabc',
      to: TO,
      value: MAX_U256,
      data: '0xa9059cbb000000000000000000000000',
      chain_id: 31337n,
      nonce: 7n,
      gas: 21000n,
    },
    eip_712: eip712Of(
      JSON.stringify({
        types: {
          EIP712Domain: [{ name: 'name', type: 'string' }],
          Permit: [
            { name: 'spender', type: 'address' },
            { name: 'value', type: 'uint256' },
          ],
        },
        primaryType: 'Permit',
        domain: {
          name: 'USDC',
          version: '2',
          chainId: 1,
          verifyingContract: '0xAbC0000000000000000000000000000000000001',
        },
        message: { spender: '0xDEF0000000000000000000000000000000000002', value: MAX_U256.toString() },
      }),
    )!,
    eip_7702_authorization: eip7702Of(
      JSON.stringify({ chainId: 1, address: '0xAA00000000000000000000000000000000000000', nonce: 3 }),
    )!,
  },
  solana: {
    tx: {
      program_keys: ['11111111111111111111111111111111'],
      transfers: [{ from: 'A', to: 'B', amount: 5n }],
    },
  },
}

const consensusScope: PolicyScope = {
  approvers: [
    { id: 'u1', tags: ['t-admin'], email: 'a@x.io', alias: 'alice' },
    { id: 'u2', tags: ['t-admin', 't-ops'], email: '', alias: 'bob' },
    { id: 'u3', tags: [], email: '', alias: 'carol' },
  ],
  credentials: [
    {
      id: 'k1',
      user_id: 'u1',
      type: 'CREDENTIAL_TYPE_API_KEY_P256',
      credential_id: 'k1',
      public_key: '02aa',
    },
  ],
}

const run = (source: string) => evaluateExpression(parsePolicy(source, CONDITION_KEYWORDS), scope)
const runConsensus = (source: string) =>
  evaluateExpression(parsePolicy(source, CONSENSUS_KEYWORDS), consensusScope)

function runtimeError(source: string, keywords = CONDITION_KEYWORDS, maxSteps?: number) {
  try {
    evaluateExpression(
      parsePolicy(source, keywords),
      keywords === CONDITION_KEYWORDS ? scope : consensusScope,
      maxSteps,
    )
  } catch (error) {
    expect(error).toBeInstanceOf(PolicyRuntimeError)
    return (error as PolicyRuntimeError).message
  }
  throw new Error(`expected a runtime error for ${source}`)
}

describe('evaluateExpression', () => {
  it('reads every condition keyword', () => {
    expect(run("activity.type == 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2'")).toBe(true)
    expect(
      run(
        "activity.resource == 'WALLET' && activity.action == 'SIGN' && activity.kind == 'sign_transaction'",
      ),
    ).toBe(true)
    expect(run("activity.params.signWith == '0xabc' && activity.params.labels['env'] == 'prod'")).toBe(true)
    expect(
      run("wallet.id == 'w1' && wallet.label == 'Treasury' && !wallet.exported && wallet.imported"),
    ).toBe(true)
    expect(run("wallet_account.address == '0xabc'")).toBe(true)
    expect(run(`eth.tx.to == '${TO}' && eth.tx.from == '0xabc'`)).toBe(true)
    expect(run("eth.tx.data[0..10] == '0xa9059cbb'")).toBe(true)
    expect(run('eth.tx.chain_id == 31337 && eth.tx.nonce < 8 && eth.tx.gas >= 21000')).toBe(true)
    expect(run("eth.eip_712.primary_type == 'Permit' && eth.eip_712.domain.name == 'USDC'")).toBe(true)
    expect(
      run(
        "eth.eip_712.domain.chain_id == 1 && eth.eip_712.domain.verifying_contract == '0xabc0000000000000000000000000000000000001'",
      ),
    ).toBe(true)
    expect(run("eth.eip_712.message.spender == '0xdef0000000000000000000000000000000000002'")).toBe(true)
    expect(run(`eth.eip_712.message['value'] == ${MAX_U256}`)).toBe(true)
    expect(run("eth.eip_7702_authorization.address == '0xaa00000000000000000000000000000000000000'")).toBe(
      true,
    )
    expect(run('eth.eip_7702_authorization.chain_id == 1 && eth.eip_7702_authorization.nonce == 3')).toBe(
      true,
    )
    expect(run("solana.tx.program_keys.all(p, p == '11111111111111111111111111111111')")).toBe(true)
    expect(run("solana.tx.transfers.any(t, t.to == 'B' && t.amount <= 5)")).toBe(true)
  })

  it('compares big numbers exactly', () => {
    expect(run(`eth.tx.value == ${MAX_U256}`)).toBe(true)
    expect(run(`eth.tx.value > ${MAX_U256 - 1n}`)).toBe(true)
    expect(run(`eth.tx.value < ${MAX_U256}`)).toBe(false)
    expect(run('eth.tx.value > 1000000000000000000')).toBe(true)
    // 2^53 + 1 would round to 2^53 as a float.
    expect(run('9007199254740993 > 9007199254740992')).toBe(true)
    expect(run("'abc' < 'abd' && 'b' > 'a' && 'a' <= 'a'")).toBe(true)
  })

  it('evaluates operators, lists and strings', () => {
    expect(run('true && !false')).toBe(true)
    expect(run('false || 1 != 2')).toBe(true)
    expect(run("activity.action in ['SIGN', 'EXPORT']")).toBe(true)
    expect(run("activity.action in ['DELETE']")).toBe(false)
    expect(run('[1, 2, 3][1]')).toBe(2n)
    expect(run('[1, 2, 3][0..2]')).toEqual([1n, 2n])
    expect(run("'abc'[0]")).toBe('a')
    expect(run("'abc'[1..]")).toBe('bc')
    expect(run('[1, 2, 3].filter(x, x > 1)')).toEqual([2n, 3n])
    expect(run('[1, 2, 3].filter(x, x > 1).count()')).toBe(2n)
    expect(run('[1, 1].all(x, x == 1) && ![1, 2].all(x, x == 1) && [1, 2].any(x, x == 2)')).toBe(true)
    expect(run('[].all(x, x == 1) && ![].any(x, x == 1)')).toBe(true)
    expect(run('[1, 2].contains(2) && ![1, 2].contains(3)')).toBe(true)
    expect(run("'0xa9059cbb'.contains('9059')")).toBe(true)
    expect(run("[[1], [2]].contains([2]) && ['a'] == ['a']")).toBe(true)
    expect(run("'abc'.count()")).toBe(3n)
  })

  it('reads consensus keywords', () => {
    expect(runConsensus("approvers.filter(u, u.tags.contains('t-admin')).count() >= 2")).toBe(true)
    expect(runConsensus("approvers.filter(u, u.tags.contains('t-ops')).count() >= 2")).toBe(false)
    expect(runConsensus("approvers.any(u, u.id == 'u3' && u.alias == 'carol')")).toBe(true)
    expect(runConsensus("approvers.any(u, u.email == 'a@x.io')")).toBe(true)
    expect(
      runConsensus("credentials.any(c, c.user_id == 'u1' && c.type == 'CREDENTIAL_TYPE_API_KEY_P256')"),
    ).toBe(true)
  })

  it('fails with a runtime error on a missing field, a wrong type or a bad index', () => {
    expect(runtimeError('eth.tx.max_fee == 1')).toBe("no field 'max_fee' here at position 7")
    expect(runtimeError('eth.tx.to == 1')).toBe('cannot compare string with int at position 10')
    expect(runtimeError("eth.tx.to > 'a' || eth.tx.value < 'a'")).toContain('cannot order int and string')
    expect(runtimeError('eth.tx.to && true')).toContain('must be bool')
    expect(runtimeError('[1][1] == 1')).toContain('index 1 is out of range')
    expect(runtimeError("eth.tx.data[0..99] == 'x'")).toContain('out of range')
    expect(runtimeError("eth.tx.data[5..2] == 'x'")).toContain('after its end')
    expect(runtimeError("activity.params['nope'] == 1")).toContain("no key 'nope'")
    expect(runtimeError('wallet.label.all(x, true)')).toContain('all() needs a list')
    expect(runtimeError('[1].any(x, x)')).toContain('must be bool')
    expect(runtimeError('wallet.label.contains(1)')).toContain('must be string')
    expect(runtimeError('wallet.exported.flag == true')).toContain("cannot read field 'flag' of bool")
    // A keyword the activity does not have.
    expect(() =>
      evaluateExpression(parsePolicy("eth.tx.to == 'x'", CONDITION_KEYWORDS), { activity: {} }),
    ).toThrow("'eth' is not available for this activity")
  })

  it('short-circuits && and ||', () => {
    expect(evaluateExpression(parsePolicy("false && eth.tx.to == 'x'", CONDITION_KEYWORDS), {})).toBe(false)
    expect(evaluateExpression(parsePolicy("true || eth.tx.to == 'x'", CONDITION_KEYWORDS), {})).toBe(true)
  })

  it('lets a true any/|| or a false all/&& stand over an item or side that throws (CEL)', () => {
    // `[1][5]` throws (out of range); `x[1]` throws on a one-item list.
    expect(run('[[1], [2, 3]].any(x, x[1] == 3)')).toBe(true)
    expect(run('[[2, 3], [1]].any(x, x[1] == 3)')).toBe(true)
    expect(run('[[1], [2, 3]].all(x, x[1] == 4)')).toBe(false)
    expect(run('[[1], [2, 4], [5]].all(x, x[1] == 3)')).toBe(false)
    expect(run('[1][5] == 1 || true')).toBe(true)
    expect(run('true || [1][5] == 1')).toBe(true)
    expect(run('[1][5] == 1 && false')).toBe(false)
    expect(run('false && [1][5] == 1')).toBe(false)
    expect(run("eth.tx.nope == 1 || [1][5] == 1 || activity.action == 'SIGN'")).toBe(true)
    expect(run("eth.tx.nope == 1 && [1][5] == 1 && activity.action == 'X'")).toBe(false)
    // A non-bool operand or predicate is such an error too.
    expect(run('eth.tx.to || true')).toBe(true)
    expect(run('[1, 2].any(x, x == 2 || x)')).toBe(true)
    // No item or side decides: the first error is thrown.
    expect(runtimeError('[[1], [2, 3]].any(x, x[1] == 4)')).toContain('index 1 is out of range')
    expect(runtimeError('[[2, 3], [1]].all(x, x[1] == 3)')).toContain('index 1 is out of range')
    expect(runtimeError('[[1], [2]].any(x, x[1] == 1)')).toContain('index 1 is out of range')
    expect(runtimeError("[1][5] == 1 || eth.tx.nope == 1 || activity.action == 'X'")).toContain(
      'index 5 is out of range',
    )
    expect(runtimeError("[1][5] == 1 && activity.action == 'SIGN'")).toContain('index 5 is out of range')
    expect(runtimeError("activity.action == 'SIGN' && [1][5] == 1")).toContain('index 5 is out of range')
    expect(runtimeError('false || [1][5] == 1')).toContain('index 5 is out of range')
    // Under `!` the error stays an error.
    expect(runtimeError('![[1]].any(x, x[1] == 1)')).toContain('index 1 is out of range')
    expect(run('![[1], [2, 3]].any(x, x[1] == 3)')).toBe(false)
    // filter, map-like reads and comparisons still propagate an item's error.
    expect(runtimeError('[[1], [2, 3]].filter(x, x[1] == 3).count() > 0')).toContain('out of range')
  })

  it('short-circuits && and || only on a decisive value, not on an error', () => {
    // A false left side of && (a true one of ||) still leaves the right unread: no keyword `eth`.
    expect(evaluateExpression(parsePolicy("false && eth.tx.to == 'x'", CONDITION_KEYWORDS), {})).toBe(false)
    expect(evaluateExpression(parsePolicy("true || eth.tx.to == 'x'", CONDITION_KEYWORDS), {})).toBe(true)
    // A left side that throws: the right is read, and may decide.
    const noEth = (source: string) => evaluateExpression(parsePolicy(source, CONDITION_KEYWORDS), {})
    expect(noEth("eth.tx.to == 'x' && false")).toBe(false)
    expect(noEth("eth.tx.to == 'x' || true")).toBe(true)
    expect(() => noEth("eth.tx.to == 'x' || false")).toThrow("'eth' is not available")
    expect(() => noEth("eth.tx.to == 'x' && true")).toThrow("'eth' is not available")
    // any/all stop at the first decisive item, && and || at the first decisive side: what comes
    // after (here, a scan far past the step limit) is not read.
    const big: PolicyScope = { approvers: toPolicyValue(Array.from({ length: 2000 }, (_, i) => i))! }
    const costly = 'approvers.all(a, approvers.all(b, a >= 0))'
    const withBig = (source: string) => evaluateExpression(parsePolicy(source, CONSENSUS_KEYWORDS), big)
    expect(withBig(`[[2, 3], [1], [4]].any(x, x[1] == 3 || ${costly}) || ${costly}`)).toBe(true)
    expect(withBig(`[[2, 4], [1], [4]].all(x, x[1] == 3 && ${costly}) && ${costly}`)).toBe(false)
  })

  it('counts the steps of every item and side read, and never absorbs running out of them', () => {
    const steps = (source: string, maxSteps: number) => {
      try {
        return evaluateExpression(parsePolicy(source, CONDITION_KEYWORDS), scope, maxSteps)
      } catch (error) {
        return (error as Error).name
      }
    }
    // The cheapest budget each takes, found by lowering it until it runs out: items that threw
    // are counted (the second list costs more than the first, which decides on its first item).
    const cheapest = (source: string) => {
      let max = 1
      while (steps(source, max) === 'PolicyStepLimitError') max++
      return max
    }
    const decidesFirst = cheapest('[[1, 3], [2]].any(x, x[1] == 3)')
    const decidesAfterError = cheapest('[[2], [1, 3]].any(x, x[1] == 3)')
    expect(decidesAfterError).toBeGreaterThan(decidesFirst)
    expect(steps('[[2], [1, 3]].any(x, x[1] == 3)', decidesAfterError)).toBe(true)
    // Running out of steps is thrown at once, even where a later item or side would decide.
    const big = toPolicyValue(Array.from({ length: 2000 }, (_, i) => i))!
    const costly = 'approvers.all(a, approvers.all(b, a >= 0))'
    for (const source of [
      `[1, 2].any(x, x == 1 && ${costly})`,
      `[1, 2].any(x, x == 2 || ${costly})`,
      `[1, 2].all(x, x == 1 && ${costly})`,
      `${costly} || true`,
      `${costly} && false`,
      `[[1], [2]].any(x, x[1] == 1) || ${costly} || true`,
    ]) {
      const tree = parsePolicy(source, CONSENSUS_KEYWORDS)
      expect(() => evaluateExpression(tree, { approvers: big }), source).toThrow(PolicyStepLimitError)
      const budget = { remaining: 50 }
      expect(() => evaluateExpression(tree, { approvers: big }, 1_000_000, budget), source).toThrow(
        PolicyStepLimitError,
      )
      expect(budget.remaining).toBeLessThan(0)
    }
  })

  it('cuts a costly evaluation off at the step limit', () => {
    const list = toPolicyValue(Array.from({ length: 2000 }, (_, i) => i))!
    const big: PolicyScope = { approvers: list }
    const costly = parsePolicy('approvers.all(a, approvers.all(b, a >= 0))', CONSENSUS_KEYWORDS)
    expect(() => evaluateExpression(costly, big)).toThrow('evaluation exceeded 20000 steps')
    expect(runtimeError('[1, 2, 3].all(x, x > 0)', CONDITION_KEYWORDS, 5)).toContain('exceeded 5 steps')
    expect(() =>
      evaluateExpression(parsePolicy('approvers.count() == 2000', CONSENSUS_KEYWORDS), big),
    ).not.toThrow()
  })
})
