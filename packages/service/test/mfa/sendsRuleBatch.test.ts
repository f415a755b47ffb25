// The kit's "sends above an amount need a passkey" rule (src/components/mfa/rules.ts,
// `sendsCondition`) bounds each call of a send, not a total (docs/mfa.md): each call of a batch is
// judged by its value plus the transaction's most fee, so a batch of five calls of 0.09 ETH runs
// under a 0.1 ETH rule (0.45 ETH in one send, as five sends of 0.09 ETH would; a spending limit
// bounds totals), while a batch with one call over the amount, or one call of 0.45 ETH, is held.
import { base32nopad } from '@scure/base'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sendsCondition } from '../../../../src/components/mfa/rules.ts'
import { totp } from '../../src/mfa/totp.ts'
import { createHarness, ETHEREUM_ACCOUNT, fakeClock, resultOf } from '../../src/testing/harness.ts'
import { delegated } from '../policies/delegated.ts'
import { type Chain, startChain, waitForSend } from '../sending/sendSupport.ts'

const CAIP2 = 'eip155:31337'
const ETH = 10n ** 18n
const PAYEE = '0x00000000000000000000000000000000000c0ffe'

let chain: Chain
beforeAll(async () => {
  chain = await startChain()
}, 60_000)
afterAll(async () => {
  await chain?.node.close()
})

async function setup() {
  const h = await createHarness({
    clock: fakeClock(Date.now()),
    rpc: { [CAIP2]: chain.url },
    sending: { pollIntervalMs: 20 },
    sponsorship: { delegates: { [CAIP2]: chain.delegate } },
  })
  const t = await delegated([ETHEREUM_ACCOUNT], h)
  const from = t.sub.addresses![0]!
  await chain.fund(from, 2n * ETH)
  await t.policy({ policyName: 'sends', effect: 'EFFECT_ALLOW', condition: "activity.resource == 'WALLET'" })
  const asBackend = (path: Parameters<typeof h.submit>[0], params: unknown) => {
    h.clock.advance(1)
    return h.submit(path, params, t.asBackend)
  }
  // The stolen session's user has a second factor and the kit's 0.1 ETH rule on.
  const enrolled = resultOf(
    'latchkey_create_totp_factor',
    await asBackend('latchkey_create_totp_factor', { userId: t.backendUserId }),
  )
  const secret = base32nopad.decode(enrolled.secret)
  resultOf(
    'latchkey_confirm_totp_factor',
    await asBackend('latchkey_confirm_totp_factor', {
      userId: t.backendUserId,
      factorId: enrolled.factorId,
      code: totp(secret, h.clock.now()),
    }),
  )
  h.clock.advance(1)
  resultOf(
    'create_mfa_policy',
    await h.submit(
      'create_mfa_policy',
      {
        userId: t.backendUserId,
        mfaPolicyName: 'latchkey: sends above an amount need a passkey',
        condition: sendsCondition(ETH / 10n),
        requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] }],
        order: 0,
      },
      t.asRoot,
    ),
  )
  const send = (calls: { to: string; value: string }[]) =>
    asBackend('eth_send_transaction', { from, caip2: CAIP2, calls })
  return { h, t, from, send }
}

describe('the passkey rule and the calls of a batch', () => {
  it('bounds each call: five calls of 0.09 ETH run in one send, a call over the amount holds the batch', async () => {
    const { h, t, send } = await setup()
    const wait = (id: string) => waitForSend(h, id, { organizationId: t.sub.organizationId, as: t.asBackend })
    const call = (value: bigint) => ({ to: PAYEE, value: String(value) })
    // One call of 0.45 ETH is held; one of 0.09 ETH passes (under the amount, fee included).
    const single = await send([call((45n * ETH) / 100n)])
    const small = await send([call((9n * ETH) / 100n)])
    // One call over the amount holds the whole batch, whatever the others.
    const mixed = await send([call(ETH / 100n), call((11n * ETH) / 100n), call(ETH / 100n)])
    expect([single, small, mixed].map((reply) => reply.body.activity?.status)).toEqual([
      'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED',
      'ACTIVITY_STATUS_COMPLETED',
      'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED',
    ])
    await wait(resultOf('eth_send_transaction', small).sendTransactionStatusId as string)
    const before = await chain.balance(PAYEE)
    // Five calls of 0.09 ETH, each under the amount with the batch's fee: the send runs.
    const batch = await send([1, 2, 3, 4, 5].map(() => call((9n * ETH) / 100n)))
    expect(batch.body.activity?.status).toBe('ACTIVITY_STATUS_COMPLETED')
    await wait(resultOf('eth_send_transaction', batch).sendTransactionStatusId as string)
    expect((await chain.balance(PAYEE)) - before).toBe((45n * ETH) / 100n)
    await h.service.close()
  }, 60_000)
})
