// One activity's policies share one budget of steps over all its scopes (each account of a deleted
// or exported wallet, each payload, signer and call: POLICY_LIMITS.maxStepsPerDecision). Past it,
// every policy left errored in every scope left, and a DENY that errors refuses nothing, while an
// ALLOW with no condition costs no step and still allowed: `delete_wallets` naming a wallet of
// ~1,000 accounts first and the treasury's wallet last deleted the treasury's wallet past a DENY on
// its account, and `sign_raw_payloads` with costly junk payloads first signed a denied one. A
// decision whose policies ran out of steps is now refused (403 OUTCOME_DENY_IMPLICIT naming the
// cost), unless a DENY matched or the root quorum is met (root users are not governed by policies).
import { describe, expect, it } from 'vitest'
import { POLICY_LIMITS } from '../../src/policies/limits.ts'
import { MAX_WALLET_ACCOUNTS } from '../../src/policies/walletAccountsOf.ts'
import { ETHEREUM_ACCOUNT, type Harness, resultOf } from '../../src/testing/harness.ts'
import { delegated } from '../policies/delegated.ts'
import { permit, SPENDER } from '../policies/typedData.ts'

const SPENDING = { ...ETHEREUM_ACCOUNT, path: "m/44'/60'/0'/0/1" }

const hex = (bytes: number) =>
  Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('')

let filled = 0
/** `walletId` filled up to `count` accounts by rows written directly (as `create_wallet_accounts` adds them). */
async function fillWallet(h: Harness, walletId: string, count: number) {
  const existing = await h.service.store.findBy('walletAccounts', 'walletId', walletId)
  const template = existing[0]!
  const rows = Array.from({ length: count - existing.length }, () => ({
    ...template,
    id: `budget-filled-${++filled}`,
    path: `m/44'/60'/1'/0/${filled}`,
    address: `0x${hex(20)}`,
    publicKey: `02${hex(32)}`,
  }))
  await h.service.store.transaction(async (w) => {
    for (const row of rows) await w.put('walletAccounts', row)
  })
}

const spentRefusal = (reply: Awaited<ReturnType<Harness['submit']>>) => ({
  status: reply.status,
  outcome: reply.body.details?.outcome,
  limit: reply.body.details?.limit,
  namesTheCost: String(reply.body.message).includes(`${POLICY_LIMITS.maxStepsPerDecision} steps`),
})
const SPENT = {
  status: 403,
  outcome: 'OUTCOME_DENY_IMPLICIT',
  limit: 'maxStepsPerDecision',
  namesTheCost: true,
}

describe('a decision whose policies run out of steps', () => {
  it('refuses delete_wallets naming a filled wallet first and the treasury last; the root quorum still decides', async () => {
    const t = await delegated([ETHEREUM_ACCOUNT, SPENDING])
    const treasury = (t.sub.addresses![0] as string).toLowerCase()
    const submit = (path: Parameters<Harness['submit']>[0], params: unknown, as = t.asBackend) => {
      t.h.clock.advance(1)
      return t.h.submit(path, params, as)
    }
    await t.policy({ policyName: 'back end may', effect: 'EFFECT_ALLOW' })
    resultOf(
      'create_policies',
      await t.h.submit(
        'create_policies',
        {
          policies: [treasury, ...Array.from({ length: 59 }, () => `0x${hex(20)}`)].map((address, i) => ({
            policyName: `never delete protected ${i}`,
            effect: 'EFFECT_DENY',
            condition: `activity.action == 'DELETE' && wallet_account.address == '${address}'`,
            notes: '',
          })),
        },
        t.asRoot,
      ),
    )
    const filler = resultOf(
      'create_wallet',
      await submit('create_wallet', { walletName: 'filler', accounts: [ETHEREUM_ACCOUNT] }),
    ).walletId as string
    await fillWallet(t.h, filler, MAX_WALLET_ACCOUNTS - 2)
    // Control: the treasury's wallet named first meets the DENY within the budget.
    const first = await submit('delete_wallets', {
      walletIds: [t.sub.walletId, filler],
      deleteWithoutExport: true,
    })
    expect(first.body.details?.outcome).toBe('OUTCOME_DENY_EXPLICIT')
    // Named last: the budget is spent on the filler's accounts. Refused, saying why.
    const last = await submit('delete_wallets', {
      walletIds: [filler, t.sub.walletId],
      deleteWithoutExport: true,
    })
    expect(spentRefusal(last)).toEqual(SPENT)
    expect(await t.h.service.store.get('wallets', t.sub.walletId!)).toBeDefined()
    expect(await t.h.service.store.get('wallets', filler)).toBeDefined()
    // Recorded: the decision, then each policy (the DENYs out of steps as OUTCOME_ERROR).
    const evaluations = await t.h.query(
      'get_policy_evaluations',
      { organizationId: t.sub.organizationId, activityId: last.body.details.activityId },
      t.asRoot,
    )
    const recorded = JSON.stringify(evaluations.body)
    expect(recorded).toContain('OUTCOME_DENY_IMPLICIT')
    expect(recorded).toContain('OUTCOME_ERROR')
    // The root quorum (the end user alone) is not governed by policies: it deletes the filler
    // however costly its policies.
    const byRoot = await submit(
      'delete_wallets',
      { walletIds: [filler], deleteWithoutExport: true },
      t.asRoot,
    )
    expect(byRoot.body.activity?.status, JSON.stringify(byRoot.body)).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(await t.h.service.store.get('wallets', filler)).toBeUndefined()
    await t.h.service.close()
  }, 120_000)

  it('refuses sign_raw_payloads whose costly junk payloads come before the denied one', async () => {
    const t = await delegated([ETHEREUM_ACCOUNT])
    const signWith = t.sub.addresses![0] as string
    // 57 items: ~19,700 steps for two nested `any`s (false: every item is 0), within a policy's
    // own 20,000 (a DENY out of its own steps refuses everything:
    // test/security/denyOutOfStepsFailsClosed.test.ts).
    const list = `[${Array.from({ length: 57 }, () => '0').join(',')}]`
    await t.policy({ policyName: 'back end may', effect: 'EFFECT_ALLOW' })
    // Costly DENYs (created first, so evaluated first) read the payload, so they are evaluated in
    // each payload's scope: the first payload's scope takes 19 x ~19,700 steps of the 400,000, and
    // the second runs out before the DENY on the spender is evaluated there.
    for (let i = 0; i < 19; i++)
      await t.policy({
        policyName: `costly ${i}`,
        effect: 'EFFECT_DENY',
        condition: `eth.eip_712.message.value >= 0 && ${list}.any(a, ${list}.any(b, a != b))`,
      })
    await t.policy({
      policyName: 'never permit the spender',
      effect: 'EFFECT_DENY',
      condition: `eth.eip_712.message.spender == '${SPENDER}' && eth.eip_712.message.value == 1`,
    })
    const sign = (values: string[]) => {
      t.h.clock.advance(1)
      return t.h.submit(
        'sign_raw_payloads',
        {
          signWith,
          payloads: values.map((value) => JSON.stringify(permit(value))),
          encoding: 'PAYLOAD_ENCODING_EIP712',
          hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
        },
        t.asBackend,
      )
    }
    // Controls: the denied payload alone (or first) is refused by its DENY; a junk one alone is signed.
    expect((await sign(['1', '7'])).body.details?.outcome).toBe('OUTCOME_DENY_EXPLICIT')
    expect((await sign(['1'])).body.details?.outcome).toBe('OUTCOME_DENY_EXPLICIT')
    expect((await sign(['7'])).body.activity?.status).toBe('ACTIVITY_STATUS_COMPLETED')
    // The junk payload first: the denied one's scope is past the budget.
    expect(spentRefusal(await sign(['7', '1']))).toEqual(SPENT)
    // Past the budget, a junk pair is refused as well: the spent budget never lets an ALLOW decide.
    expect(spentRefusal(await sign(['7', '7']))).toEqual(SPENT)
    await t.h.service.close()
  }, 120_000)
})
