// A signing under a spending limit in flight on instance B while the organization changes on A,
// on PostgreSQL. It waits for the organization's spend lock and reads the limits after it; it must
// decide and sign on everything else as of that moment too: the organization row (its root users
// and quorum) and the signer's wallet account, not as admission read them before the lock. Each
// case commits a sequence of changes on A while the signing waits between its admission and its
// transaction (`submitRacing`): every state the sequence committed refuses it, and a decision on
// a mix of the state before and the state after signed it (found by the audit of 4c598538 and
// 02e1d524; the three fail without reading those after the lock, `decisionLookups`). The same
// cases on SQLite, one process, whose transaction reads them (the root set case failed there too).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  type Harness,
  resultOf,
  testKey,
} from '../../src/testing/harness.ts'
import { refusal, submitRacing } from '../security/inFlight.ts'
import { usePostgres, useTwoInstances } from '../support/twoInstances.ts'
import { agentUser, signRequest, submitOk } from './agentGrant.ts'
import { rootSetCases, type TwoRoots, twoRoots } from './rootSetChanges.ts'

const postgres = usePostgres()

const ETH = 10n ** 18n
const ALLOWANCE = 10_000n

/** R1's signing of `value` wei on chain 1 (`rootSetCases`). */
const sign = (t: TwoRoots, on: Harness, value: bigint) =>
  signRequest(on, t.address, t.r1, t.organizationId, value)

describe('a signing under a limit decides on the organization and its signer as of its lock (PostgreSQL, two instances)', () => {
  const pair = useTwoInstances('limits_root_set_wallet_changed', { postgres })
  changedWhileSigning(() => pair.both)
})

// SQLite takes no lock: a limited signing reads its limits in its transaction, and must decide on
// the organization as of that transaction too (`organizationNow` for every ordered run; the root
// set case signed 100 ETH uncounted on SQLite after the PostgreSQL fix).
describe('a signing under a limit decides on the organization and its signer as of its transaction (SQLite)', () => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness()
  })
  afterAll(async () => {
    await h?.service.close()
  })
  changedWhileSigning(() => [h, h])
})

/** The three cases, the changes committed on the first harness, the signing sent to the second. */
function changedWhileSigning(instances: () => [Harness, Harness]) {
  rootSetCases('signing', instances, (a) => twoRoots(a, 'eip155:1'), sign)

  it('a wallet deleted while an agent’s signing with its key is in flight: the DENY on that wallet still holds (the signing is not judged without its wallet)', async () => {
    const [a, b] = instances()
    const owner = testKey()
    const sub = await a.createSubOrganization({
      keys: [owner],
      wallet: { walletName: 'cold', accounts: [ETHEREUM_ACCOUNT] },
    })
    const organizationId = sub.organizationId
    const agent = testKey()
    const { userIds } = resultOf(
      'create_users',
      await submitOk(a, 'create_users', agentUser(agent), owner, organizationId),
    )
    const agentUserId = userIds[0] as string
    // A hot wallet the agent pays from, under an allowance on the hot account only.
    const hot = resultOf(
      'create_wallet',
      await submitOk(
        a,
        'create_wallet',
        { walletName: 'hot', accounts: [ETHEREUM_ACCOUNT] },
        owner,
        organizationId,
      ),
    ) as { walletId: string; addresses: string[] }
    await submitOk(
      a,
      'latchkey_create_spending_limit',
      {
        spendingLimitName: 'hot allowance',
        scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: hot.addresses[0] },
        window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
        asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:1' },
        amount: String(ALLOWANCE),
      },
      owner,
      organizationId,
    )
    // The agent may sign with the organization's wallets, never with the cold one.
    await submitOk(
      a,
      'create_policy',
      {
        policyName: 'agent signs',
        effect: 'EFFECT_ALLOW',
        condition: `activity.resource == 'WALLET' && activity.action == 'SIGN'`,
        consensus: `approvers.all(user, user.id == '${agentUserId}')`,
        notes: '',
      },
      owner,
      organizationId,
    )
    await submitOk(
      a,
      'create_policy',
      {
        policyName: 'never the cold wallet',
        effect: 'EFFECT_DENY',
        condition: `activity.resource == 'WALLET' && activity.action == 'SIGN' && wallet.label == 'cold'`,
        notes: '',
      },
      owner,
      organizationId,
    )
    const cold = sub.addresses![0]!
    // Controls: the agent signs from the hot wallet within its allowance; the cold wallet is denied.
    expect((await b.submit(...signRequest(b, hot.addresses[0]!, agent, organizationId, 1000n))).status).toBe(
      200,
    )
    const denied = await b.submit(...signRequest(b, cold, agent, organizationId, 100n * ETH))
    expect([denied.status, denied.body?.details?.outcome]).toEqual([403, 'OUTCOME_DENY_EXPLICIT'])
    // The owner exports the cold wallet elsewhere and deletes it here (its funds stay on chain).
    const signed = await submitRacing(
      b,
      async () => {
        await submitOk(
          a,
          'delete_wallets',
          { walletIds: [sub.walletId], deleteWithoutExport: true },
          owner,
          organizationId,
        )
      },
      ...signRequest(b, cold, agent, organizationId, 100n * ETH),
    )
    // Before the delete: 403 by the DENY; after it: the account is gone (404). Never signed: read
    // after the lock, the account is gone with its wallet (the DENY on `wallet`, which has none,
    // errors and takes no part; the ALLOW allows it), and the signing fails finding its signer.
    expect(refusal(signed), JSON.stringify(signed.body?.activity?.result ?? signed.body)).toEqual([
      404,
      'WALLET_ACCOUNT_NOT_FOUND',
    ])
    expect((await b.submit(...signRequest(b, cold, agent, organizationId, 100n * ETH))).status).not.toBe(200)
  })
}
