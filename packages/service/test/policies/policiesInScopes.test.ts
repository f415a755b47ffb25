// An activity on every account of a wallet (`export_wallet`, `delete_wallets`) is judged once per
// account, and all its scopes share one budget of 400,000 steps (POLICY_LIMITS.maxStepsPerDecision).
// Each scope evaluated every policy, so an ordinary ALLOW on `wallet.id` in an organization of ~100
// cheap policies failed on a wallet of 1,000 accounts (within MAX_WALLET_ACCOUNTS), refused
// OUTCOME_DENY_IMPLICIT with no word of why. A policy is now evaluated once for all the scopes that
// hold the same values of the keywords it reads (`evaluatePoliciesInScopes`): a policy not reading
// `wallet_account` once for the 1,000 accounts, with the same outcomes as evaluated in each.
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import type { PolicyScope } from '../../src/policies/evaluateExpression.ts'
import {
  combinePolicyResults,
  decisionBudget,
  evaluatePolicies,
  evaluatePoliciesInScopes,
  keywordsRead,
  type PolicyInput,
  parseCondition,
} from '../../src/policies/evaluatePolicies.ts'
import { POLICY_LIMITS } from '../../src/policies/limits.ts'
import { MAX_WALLET_ACCOUNTS } from '../../src/policies/walletAccountsOf.ts'
import { ETHEREUM_ACCOUNT, type Harness, resultOf } from '../../src/testing/harness.ts'
import { delegated } from './delegated.ts'

const hex = (bytes: number) =>
  Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('')

describe('keywordsRead', () => {
  it('names the keywords an expression reads, not the variables of its predicates', () => {
    const read = (source: string) => [...keywordsRead(parseCondition(source))].sort()
    expect(read("activity.action == 'EXPORT' && wallet_account.address == '0x01'")).toEqual([
      'activity',
      'wallet_account',
    ])
    expect(read("['a'].any(wallet_account, wallet_account == 'a')")).toEqual([])
    expect(read("[wallet.id].any(wallet, wallet == 'a') || wallet.label == 'b'")).toEqual(['wallet'])
    expect(read("[1].all(x, eth.tx.to == 'a' && x == 1)")).toEqual(['eth'])
    expect(read('solana.tx[activity.params.i][0..wallet.n].count() > 0')).toEqual([
      'activity',
      'solana',
      'wallet',
    ])
    expect(read('eth.tx.data.contains(wallet_account.address)')).toEqual(['eth', 'wallet_account'])
  })
})

describe('evaluatePoliciesInScopes', () => {
  const list = `[${Array.from({ length: 150 }, () => '0').join(',')}]`
  const addresses = Array.from({ length: 40 }, () => `0x${hex(20)}`)
  const policies: PolicyInput[] = [
    { id: 'allow-all', effect: 'EFFECT_ALLOW' },
    { id: 'allow-export', effect: 'EFFECT_ALLOW', condition: "activity.action == 'EXPORT'" },
    {
      id: 'allow-wallet-two',
      effect: 'EFFECT_ALLOW',
      condition: "wallet.id == 'w-1'",
      consensus: 'approvers.count() >= 2',
    },
    {
      id: 'deny-one',
      effect: 'EFFECT_DENY',
      condition: `activity.action == 'EXPORT' && wallet_account.address == '${addresses[3]}'`,
    },
    {
      id: 'deny-in-lambda',
      effect: 'EFFECT_DENY',
      condition: `[1].all(x, wallet_account.address == '${addresses[7]}')`,
    },
    { id: 'shadowed', effect: 'EFFECT_DENY', condition: "['a'].any(wallet_account, wallet_account == 'b')" },
    { id: 'deny-label', effect: 'EFFECT_DENY', condition: "wallet.label == 'Other'" },
    { id: 'not-bool', effect: 'EFFECT_ALLOW', condition: 'activity.action' },
    { id: 'no-parse', effect: 'EFFECT_DENY', condition: 'activity.' },
    { id: 'costly', effect: 'EFFECT_DENY', condition: `${list}.all(a, ${list}.all(b, a == b))` },
    {
      id: 'costly-account',
      effect: 'EFFECT_DENY',
      condition: `wallet_account.address == '' || ${list}.all(a, a == 1)`,
    },
  ]
  // Scopes as `policyContextsOf` builds them: the accounts of a wallet share its other values, a
  // holder in another wallet has its own `wallet`, and a wallet of no account has no `wallet_account`.
  const activity = { action: 'EXPORT', kind: 'export_wallet', params: { walletId: 'w-1' } }
  const base = { activity, wallet: { id: 'w-1', label: 'Main' } }
  const scopes: PolicyScope[] = [
    ...addresses.map((address) => ({ ...base, wallet_account: { address } })),
    { activity, wallet: { id: 'w-2', label: 'Other' }, wallet_account: { address: addresses[0]! } },
    base,
    { ...base, wallet: { id: 'w-1', label: 'Main' }, wallet_account: { address: addresses[3]! } },
  ]
  const consensus = { approvers: [{ id: 'u-1' }], credentials: [] }

  it('gives each scope the outcomes of evaluating every policy there, and one combined decision', () => {
    for (const rootQuorumMet of [false, true])
      for (const set of [policies, policies.filter((policy) => !policy.id.startsWith('deny'))]) {
        const alone = scopes.map((context) =>
          evaluatePolicies({ policies: set, context, consensus, rootQuorumMet }),
        )
        const together = evaluatePoliciesInScopes({
          policies: set,
          contexts: scopes,
          consensus,
          rootQuorumMet,
        })
        expect(together).toEqual(alone)
        expect(combinePolicyResults(together)).toEqual(combinePolicyResults(alone))
      }
    // The set holds every outcome, so the comparison is not of uniform results.
    const outcomes = new Set(
      evaluatePoliciesInScopes({ policies, contexts: scopes, consensus, rootQuorumMet: false }).flatMap(
        (result) => result.evaluations.map((evaluation) => evaluation.outcome),
      ),
    )
    expect([...outcomes].sort()).toEqual([
      'OUTCOME_ALLOW',
      'OUTCOME_DENY_EXPLICIT',
      'OUTCOME_DENY_IMPLICIT',
      'OUTCOME_ERROR',
      'OUTCOME_REQUIRES_CONSENSUS',
    ])
  })

  it('evaluates a policy once for the scopes holding the same values of what it reads', () => {
    const cheap = policies.filter((policy) => !policy.id.startsWith('costly'))
    const spent = (run: (budget: { remaining: number }) => void) => {
      const budget = decisionBudget()
      run(budget)
      return POLICY_LIMITS.maxStepsPerDecision - budget.remaining
    }
    const each = spent((budget) => {
      for (const context of scopes)
        evaluatePolicies({ policies: cheap, context, consensus, rootQuorumMet: false, budget })
    })
    const perAccount = cheap.filter((policy) => policy.id.startsWith('deny-') && policy.id !== 'deny-label')
    const accountsOnly = spent((budget) => {
      for (const context of scopes)
        evaluatePolicies({ policies: perAccount, context, consensus, rootQuorumMet: false, budget })
    })
    const once = spent((budget) => {
      for (const context of scopes.slice(0, 1))
        evaluatePolicies({ policies: cheap, context, consensus, rootQuorumMet: false, budget })
    })
    const together = spent((budget) => {
      evaluatePoliciesInScopes({ policies: cheap, contexts: scopes, consensus, rootQuorumMet: false, budget })
    })
    // The policies reading `wallet_account` are evaluated in each scope, the others about once.
    expect(together).toBeLessThan(each)
    expect(together).toBeLessThanOrEqual(accountsOnly + 3 * once)
    // The costly policy that reads nothing that differs costs its steps once, not once a scope.
    const costly = policies.filter((policy) => policy.id === 'costly')
    expect(
      spent((budget) => {
        evaluatePoliciesInScopes({
          policies: costly,
          contexts: scopes,
          consensus,
          rootQuorumMet: false,
          budget,
        })
      }),
    ).toBe(POLICY_LIMITS.maxSteps)
  })
})

let filled = 0
/** `walletId` filled up to `count` accounts by rows written directly (as `create_wallet_accounts` adds them). */
async function fillWallet(h: Harness, walletId: string, count: number) {
  const existing = await h.service.store.findBy('walletAccounts', 'walletId', walletId)
  const template = existing[0]!
  const rows = Array.from({ length: count - existing.length }, () => ({
    ...template,
    id: `in-scopes-filled-${++filled}`,
    path: `m/44'/60'/1'/0/${filled}`,
    address: `0x${hex(20)}`,
    publicKey: `02${hex(32)}`,
  }))
  await h.service.store.transaction(async (w) => {
    for (const row of rows) await w.put('walletAccounts', row)
  })
}

describe('export_wallet of a wallet of 1,000 accounts', () => {
  it('is allowed by an ALLOW on wallet.id among 100 policies, 20 of them per account; past the budget it says why', async () => {
    const t = await delegated([ETHEREUM_ACCOUNT])
    const walletId = t.sub.walletId!
    const targetPublicKey = bytesToHex(p256.getPublicKey(p256.utils.randomSecretKey(), false))
    const create = async (policies: unknown[]) =>
      resultOf('create_policies', await t.h.submit('create_policies', { policies }, t.asRoot))
    await create([
      {
        policyName: 'back end exports the main wallet',
        effect: 'EFFECT_ALLOW',
        condition: `activity.action == 'EXPORT' && wallet.id == '${walletId}'`,
        notes: '',
      },
      // Rules on what the back end never does: they read `activity` alone.
      ...Array.from({ length: 79 }, (_, i) => ({
        policyName: `never ${i}`,
        effect: 'EFFECT_DENY',
        condition: `activity.action == 'DELETE' && activity.params.walletId == 'w-${i}'`,
        notes: '',
      })),
      // Protected accounts, one DENY each: evaluated in each account's scope.
      ...Array.from({ length: 20 }, (_, i) => ({
        policyName: `never export protected ${i}`,
        effect: 'EFFECT_DENY',
        condition: `activity.action == 'EXPORT' && wallet_account.address == '0x${hex(20)}'`,
        notes: '',
      })),
    ])
    await fillWallet(t.h, walletId, MAX_WALLET_ACCOUNTS)
    const exportIt = () => {
      t.h.clock.advance(1)
      return t.h.submit('export_wallet', { walletId, targetPublicKey }, t.asBackend)
    }
    const full = await exportIt()
    expect(full.body.activity?.status, JSON.stringify(full.body)).toBe('ACTIVITY_STATUS_COMPLETED')
    // 80 more per-account DENYs (100 in all, ~12 steps each in each of 1,000 scopes) are past the
    // budget: refused, naming the cost rather than "no policy allows".
    await create(
      Array.from({ length: 80 }, (_, i) => ({
        policyName: `never export protected ${20 + i}`,
        effect: 'EFFECT_DENY',
        condition: `activity.action == 'EXPORT' && wallet_account.address == '0x${hex(20)}'`,
        notes: '',
      })),
    )
    const past = await exportIt()
    expect({
      status: past.status,
      outcome: past.body.details?.outcome,
      limit: past.body.details?.limit,
      max: past.body.details?.max,
    }).toEqual({
      status: 403,
      outcome: 'OUTCOME_DENY_IMPLICIT',
      limit: 'maxStepsPerDecision',
      max: POLICY_LIMITS.maxStepsPerDecision,
    })
    expect(past.body.message).toContain(`took more than ${POLICY_LIMITS.maxStepsPerDecision} steps`)
    await t.h.service.close()
  }, 120_000)
})
