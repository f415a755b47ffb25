// A session profile's scope judged before a send's fee is known (`mayHold`, the send's dry run):
// it may refuse only a send that no fee lets through, and should refuse every one it can tell,
// wherever the scope puts its fee clauses. Every scope of up to two operators over these clauses
// is judged against the scope evaluated with each fee: never "no" where some fee says yes.
import { describe, expect, it } from 'vitest'
import { mayHold } from '../../src/limits/sessionProfiles.ts'
import { evaluateExpression, type PolicyScope } from '../../src/policies/evaluateExpression.ts'
import { parseCondition } from '../../src/policies/evaluatePolicies.ts'

const FIELDS = { ethTx: ['gas', 'max_fee_per_gas', 'max_priority_fee_per_gas'] }
const CLAUSES = {
  to: "eth.tx.to == '0xshop'",
  gas: 'eth.tx.gas <= 50000',
  fee: 'eth.tx.max_fee_per_gas == 0',
  error: 'eth.tx.nothing == 1',
  notBool: 'eth.tx.gas',
  yes: 'true',
}
const GASES = [1n, 100_000n]
const FEES = [0n, 7n]

/** A send's scope: to `to`, its fee `gas`/`max_fee_per_gas` if known. */
const context = (to: string, fee?: { gas: bigint; fee: bigint }): PolicyScope => ({
  activity: { kind: 'eth_send_transaction' },
  eth: {
    tx: {
      to,
      chain_id: 1n,
      ...(fee ? { gas: fee.gas, max_fee_per_gas: fee.fee, max_priority_fee_per_gas: 0n } : {}),
    },
  },
})

const holds = (scope: string, at: PolicyScope) => {
  try {
    return evaluateExpression(parseCondition(scope), at) === true
  } catch {
    return false
  }
}

/** Every scope of at most two operators (`!`, `&&`, `||`) over the clauses. */
function scopes(): string[] {
  const atoms = Object.values(CLAUSES)
  const one = [...atoms, ...atoms.map((a) => `!(${a})`)]
  const two: string[] = []
  for (const a of one) for (const b of one) for (const op of ['&&', '||']) two.push(`(${a}) ${op} (${b})`)
  const three: string[] = []
  for (const a of atoms)
    for (const b of atoms)
      for (const c of atoms)
        for (const [x, y] of [
          ['&&', '||'],
          ['||', '&&'],
          ['&&', '&&'],
          ['||', '||'],
        ])
          three.push(`(${a}) ${x} (${b}) ${y} (${c})`, `!((${a}) ${x} (${b})) ${y} (${c})`)
  return [...one, ...two, ...three]
}

describe("a session profile's scope before the send's fee is known", () => {
  it('is refused only where no fee lets it hold; one reading no fee is judged as it is with any', () => {
    const wrong: string[] = []
    let refused = 0
    let checked = 0
    for (const scope of scopes())
      for (const to of ['0xshop', '0xelse']) {
        const withFees = GASES.flatMap((gas) => FEES.map((fee) => holds(scope, context(to, { gas, fee }))))
        const may = mayHold(scope, context(to), FIELDS)
        checked++
        // Sound: some fee lets it hold, so it must not be refused before the fee is known.
        if (!may && withFees.some(Boolean)) wrong.push(`${scope} to ${to}: refused, yet some fee holds`)
        // Without reading the fee it is decided exactly.
        if (!scope.includes('gas') && !scope.includes('max_fee') && may !== withFees[0])
          wrong.push(`${scope} to ${to}: reads no fee, judged ${may}`)
        if (!may) refused++
      }
    expect(wrong).toEqual([])
    // Not vacuous: many of them are refused before the fee is known.
    expect(checked).toBeGreaterThan(1000)
    expect(refused).toBeGreaterThan(checked / 4)
  })

  it('refuses "pay one address" to another address with its fee clauses first or last', () => {
    const payShop = `${CLAUSES.to} && ${CLAUSES.gas} && eth.tx.max_fee_per_gas <= 100`
    const feeFirst = `eth.tx.max_fee_per_gas <= 100 && ${CLAUSES.gas} && ${CLAUSES.to}`
    const sponsoredOr = `(${CLAUSES.fee} || ${CLAUSES.gas}) && ${CLAUSES.to}`
    expect(
      [payShop, feeFirst, sponsoredOr].map((scope) => [
        mayHold(scope, context('0xshop'), FIELDS),
        mayHold(scope, context('0xelse'), FIELDS),
      ]),
    ).toEqual([
      [true, false],
      [true, false],
      [true, false],
    ])
  })

  it('takes a known fee as known: only the fields still pending are unknown', () => {
    const scope = `${CLAUSES.gas} && ${CLAUSES.to}`
    const known = context('0xshop', { gas: 100_000n, fee: 1n })
    expect(mayHold(scope, known, FIELDS)).toBe(false)
    expect(mayHold(scope, context('0xshop', { gas: 1n, fee: 1n }), FIELDS)).toBe(true)
  })
})
