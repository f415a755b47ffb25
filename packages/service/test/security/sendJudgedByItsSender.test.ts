// A session confined by its profile to one wallet (`wallet.id == <spending>`) cannot send
// ETH from another wallet of the organization (the treasury) by adding the spending wallet's
// address as an unread `signWith` to eth_send_transaction: the scope (and any policy) judges the
// wallet of `from`, which the handler signs with (policies/policySubject.ts). Once they read `wallet`
// from any `signWith` in the intent, and the treasury paid.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT, resultOf } from '../../src/testing/harness.ts'
import { delegatedSender, profiledSession } from '../policies/delegated.ts'
import { type Chain, startChain, waitForSend } from '../sending/sendSupport.ts'

const CAIP2 = 'eip155:31337'
const THIEF = '0x000000000000000000000000000000000000bad1'
const HALF_ETH = 5n * 10n ** 17n

let chain: Chain
beforeAll(async () => {
  chain = await startChain()
}, 60_000)
afterAll(async () => {
  await chain?.node.close()
})

describe('a session confined to one wallet and eth_send_transaction', () => {
  it('cannot send from another wallet by naming the allowed one as signWith', async () => {
    const {
      h,
      t,
      from: treasury,
    } = await delegatedSender(chain, { sending: { pollIntervalMs: 50 } } as never)
    h.clock.advance(1)
    const spending = resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'Spending', accounts: [ETHEREUM_ACCOUNT] }, t.asRoot),
    )
    const session = await profiledSession(h, {
      owner: t.asRoot,
      as: t.asRoot,
      scope: `activity.action == 'SEND' && wallet.id == '${spending.walletId}'`,
    })
    const asSession = { ...t.at, as: session }
    // Control: from the treasury, named plainly, the scope refuses it.
    h.clock.advance(1)
    const control = await h.submit(
      'eth_send_transaction',
      { from: treasury, caip2: CAIP2, calls: [{ to: THIEF, value: HALF_ETH.toString() }] } as never,
      asSession,
    )
    expect([control.status, control.body.details?.errorCode]).toEqual([403, 'SESSION_SCOPE_DENIED'])
    // Attack: the same send with `signWith` naming the spending wallet's account.
    h.clock.advance(1)
    const attack = await h.submit(
      'eth_send_transaction',
      {
        from: treasury,
        caip2: CAIP2,
        calls: [{ to: THIEF, value: HALF_ETH.toString() }],
        signWith: spending.addresses[0],
      } as never,
      asSession,
    )
    const id = attack.body.activity?.result?.ethSendTransactionResultV2?.sendTransactionStatusId as
      | string
      | undefined
    if (id) await waitForSend(h, id, { organizationId: t.at.organizationId, as: t.asRoot as never })
    expect({
      status: attack.status,
      code: attack.body.details?.errorCode ?? attack.body.activity?.status,
      thiefBalance: await chain.balance(THIEF),
    }).toEqual({ status: 403, code: 'SESSION_SCOPE_DENIED', thiefBalance: 0n })
    await h.service.close()
  }, 60_000)

  it('a back end allowed to send from one wallet cannot send from another by naming it as signWith', async () => {
    const {
      h,
      t,
      from: treasury,
    } = await delegatedSender(chain, { sending: { pollIntervalMs: 50 } } as never)
    h.clock.advance(1)
    const spending = resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'Spending', accounts: [ETHEREUM_ACCOUNT] }, t.asRoot),
    )
    await t.policy({
      policyName: 'back end sends from the spending wallet',
      effect: 'EFFECT_ALLOW',
      condition: `activity.action == 'SEND' && wallet.id == '${spending.walletId}'`,
    })
    const send = (extra: Record<string, unknown>) => {
      h.clock.advance(1)
      return h.submit(
        'eth_send_transaction',
        {
          from: treasury,
          caip2: CAIP2,
          calls: [{ to: THIEF, value: HALF_ETH.toString() }],
          ...extra,
        } as never,
        t.asBackend,
      )
    }
    // Control: from the treasury, named plainly, no policy allows it.
    expect((await send({})).status).toBe(403)
    const attack = await send({ signWith: spending.addresses[0] })
    const id = attack.body.activity?.result?.ethSendTransactionResultV2?.sendTransactionStatusId as
      | string
      | undefined
    if (id) await waitForSend(h, id, { organizationId: t.at.organizationId, as: t.asRoot as never })
    expect({
      status: attack.status,
      outcome: attack.body.details?.outcome,
      thiefBalance: await chain.balance(THIEF),
    }).toEqual({ status: 403, outcome: 'OUTCOME_DENY_IMPLICIT', thiefBalance: 0n })
    await h.service.close()
  }, 60_000)
})
