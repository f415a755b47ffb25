// A captured session-stamped eth_send_transaction, replayed after the session re-logged in with its
// own key (the same public key, a new row), is the same send: the payee is paid once
// (test/instances/onceAcrossInstances.test.ts has the rule on two instances). Anvil on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ETHEREUM_ACCOUNT, fakeClock, resultOf, testKey } from '../../src/testing/harness.ts'
import { type Chain, startChain, waitForSend } from './sendSupport.ts'

let chain: Chain
const CAIP2 = 'eip155:31337'
const PAYEE = '0x00000000000000000000000000000000000a0d17'

beforeAll(async () => {
  chain = await startChain()
}, 60_000)

afterAll(async () => {
  await chain?.node.close()
})

describe('a captured signed send and a re-login with the same session key', { timeout: 60_000 }, () => {
  it('the replay after the re-login is answered with the first send, and the payee is paid once', async () => {
    const h = await createHarness({
      clock: fakeClock(Date.now()),
      rpc: { [CAIP2]: chain.url },
      sending: { pollIntervalMs: 20 },
    })
    const root = testKey()
    const acct = await h.createSubOrganization({
      keys: [root],
      wallet: { walletName: 'Main', accounts: [ETHEREUM_ACCOUNT] },
    })
    const org = acct.organizationId
    const from = acct.addresses![0]!
    await chain.fund(from, 10n ** 18n)
    const session = testKey()
    h.clock.set(Date.now())
    resultOf(
      'stamp_login',
      await h.submit('stamp_login', { publicKey: session.publicKey }, { as: root, organizationId: org }),
    )

    // The session signs a send of 1000 wei (the request is captured on its way).
    h.clock.set(Date.now())
    const body = JSON.stringify({
      type: 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2',
      timestampMs: String(h.clock.now()),
      organizationId: org,
      parameters: { from, caip2: CAIP2, calls: [{ to: PAYEE, value: '1000' }] },
    })
    const [header, value] = session.stamp(body)
    const first = await h.post('/public/v1/submit/eth_send_transaction', body, { [header]: value })
    const { sendTransactionStatusId } = resultOf('eth_send_transaction', first)
    expect(
      (
        await waitForSend(h, sendTransactionStatusId, {
          organizationId: org,
          as: { as: root, organizationId: org } as never,
        })
      ).txStatus,
    ).toBe('INCLUDED')
    expect(await chain.balance(PAYEE)).toBe(1000n)

    // Control: replayed now, it is the same activity.
    h.clock.set(Date.now())
    const early = await h.post('/public/v1/submit/eth_send_transaction', body, { [header]: value })
    expect(early.body.activity.id).toBe(first.body.activity.id)

    // The session refreshes itself with its own key.
    h.clock.set(Date.now())
    resultOf(
      'stamp_login',
      await h.submit('stamp_login', { publicKey: session.publicKey }, { as: session, organizationId: org }),
    )

    // The captured request again, seconds later (inside the 5-minute window).
    h.clock.set(Date.now())
    const replay = await h.post('/public/v1/submit/eth_send_transaction', body, { [header]: value })
    const second = replay.body.activity?.result?.ethSendTransactionResultV2?.sendTransactionStatusId
    if (second && second !== sendTransactionStatusId)
      await waitForSend(h, second, { organizationId: org, as: { as: root, organizationId: org } as never })
    const paid = await chain.balance(PAYEE)
    await h.service.close()
    expect({ activityId: replay.body.activity?.id, paid }).toEqual({
      activityId: first.body.activity.id,
      paid: 1000n,
    })
  })
})
