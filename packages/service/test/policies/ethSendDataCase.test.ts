// eth_send_transaction's policy context reads each call's `data` lower-cased: the parser and the
// signer take hex digits in either case, and the context once copied `data` as sent, so a DENY on
// a function selector (docs/policies.md's own example: `eth.tx.data[0..10] == '0xa9059cbb'`) was
// skipped when the caller spelled the same calldata in upper case (1,000 tokens left the wallet).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Chain, erc20Call, startChain, waitForSend } from '../sending/sendSupport.ts'
import { delegatedSender } from './delegated.ts'

const CAIP2 = 'eip155:31337'
const THIEF = '0x000000000000000000000000000000000000beef'

let chain: Chain
beforeAll(async () => {
  chain = await startChain()
}, 60_000)
afterAll(async () => {
  await chain?.node.close()
})

async function setup() {
  const { h, t, from } = await delegatedSender(chain, { sending: { pollIntervalMs: 20 } })
  // The back end may send from the wallet, but never an ERC-20 transfer(...).
  await t.policy({
    policyName: 'back end sends',
    effect: 'EFFECT_ALLOW',
    condition: "activity.resource == 'WALLET'",
  })
  await t.policy({
    policyName: 'no ERC-20 transfers',
    effect: 'EFFECT_DENY',
    condition: "activity.kind == 'eth_send_transaction' && eth.tx.data[0..10] == '0xa9059cbb'",
  })
  const send = (parameters: Record<string, unknown>) => {
    h.clock.set(Date.now())
    return h.submit('eth_send_transaction', { from, caip2: CAIP2, ...parameters } as never, t.asBackend)
  }
  return { h, t, from, send }
}

describe('a DENY on eth.tx.data of eth_send_transaction', () => {
  it('denies an ERC-20 transfer whose calldata is spelled in upper-case hex', async () => {
    const { h, from, send } = await setup()
    // Tokens to steal.
    const mint = await send({ calls: [erc20Call('mint', from, 1000n)] })
    expect(mint.status, JSON.stringify(mint.body).slice(0, 300)).toBe(200)
    await waitForSend(h, mint.body.activity.result.ethSendTransactionResultV2.sendTransactionStatusId, {
      organizationId: mint.body.activity.organizationId,
    }).catch(() => undefined)

    const transfer = erc20Call('transfer', THIEF, 1000n)
    // Control: the lower-case calldata is refused by the DENY.
    const lower = await send({ calls: [transfer] })
    expect(lower.status).toBe(403)
    expect(lower.body.details.outcome).toBe('OUTCOME_DENY_EXPLICIT')

    // Attack: the same call, its hex digits in upper case.
    h.clock.advance(1)
    const upper = await send({ calls: [{ ...transfer, data: `0x${transfer.data.slice(2).toUpperCase()}` }] })
    let stolen = 0n
    if (upper.status === 200) {
      const id = upper.body.activity.result.ethSendTransactionResultV2.sendTransactionStatusId
      await waitForSend(h, id, { organizationId: upper.body.activity.organizationId }).catch(() => undefined)
      stolen = await chain.tokenBalance(THIEF)
    }
    expect({ status: upper.status, outcome: upper.body.details?.outcome, stolen }).toEqual({
      status: 403,
      outcome: 'OUTCOME_DENY_EXPLICIT',
      stolen: 0n,
    })
    await h.service.close()
  }, 60_000)
})
