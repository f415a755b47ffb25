// docs/mfa.md gives, as the way to guard an MFA condition, one on a send's value. eth_send_transaction
// accepts two types (ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2, what the published clients send, and
// the V1 name), and `activity.type` is the type as submitted: the condition the docs once gave
// (`activity.type == 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION' && ...`) held a V1 send and let the same
// send as V2 through without the second factor. The condition is read from the docs as written.
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backEndSecondFactor, delegatedSender } from '../policies/delegated.ts'
import { type Chain, startChain, waitForSend } from '../sending/sendSupport.ts'

const CAIP2 = 'eip155:31337'
const PAYEE = '0x000000000000000000000000000000000000bad2'
const HALF_ETH = 5n * 10n ** 17n
/** The send condition docs/mfa.md gives (the code span guarding `eth.tx.value > 0.1 ETH`). */
const DOCUMENTED = (() => {
  const docs = readFileSync(new URL('../../../../docs/mfa.md', import.meta.url), 'utf8')
  const spans = [...docs.matchAll(/`([^`]*eth\.tx\.value > 100000000000000000[^`]*)`/g)].map((m) => m[1]!)
  if (spans.length !== 1) throw new Error(`docs/mfa.md should give one such condition, gives ${spans.length}`)
  return spans[0]!
})()

let chain: Chain
beforeAll(async () => {
  chain = await startChain()
}, 60_000)
afterAll(async () => {
  await chain?.node.close()
})

describe("docs/mfa.md's send condition", () => {
  it('holds a 0.5 ETH send for the second factor whichever accepted type it is sent as', async () => {
    const { h, t, from } = await delegatedSender(chain, { sending: { pollIntervalMs: 50 } } as never)
    await t.policy({
      policyName: 'back end sends',
      effect: 'EFFECT_ALLOW',
      condition: "activity.resource == 'WALLET' && activity.action == 'SEND'",
    })
    await backEndSecondFactor(h, t, [{ name: 'big sends need a code', condition: DOCUMENTED }])
    const send = (type: string) => {
      h.clock.advance(1)
      return h.submit(
        'eth_send_transaction',
        { from, caip2: CAIP2, calls: [{ to: PAYEE, value: HALF_ETH.toString() }] } as never,
        { ...t.asBackend, type } as never,
      )
    }
    // Control: sent as V1, it waits for the code.
    const v1 = await send('ACTIVITY_TYPE_ETH_SEND_TRANSACTION')
    expect(v1.body.activity?.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    // The same send as V2 (the published clients' type).
    const v2 = await send('ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2')
    const id = v2.body.activity?.result?.ethSendTransactionResultV2?.sendTransactionStatusId as
      | string
      | undefined
    if (id) await waitForSend(h, id, { organizationId: t.at.organizationId, as: t.asRoot as never })
    expect({ status: v2.body.activity?.status, payee: await chain.balance(PAYEE) }).toEqual({
      status: 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED',
      payee: 0n,
    })
    await h.service.close()
  }, 60_000)
})
