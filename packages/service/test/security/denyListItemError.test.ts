// A DENY over a list the caller fills refused nothing when one junk item made its predicate throw
// (found by the audit of 8a46c164): DENY `eth.eip_712.message.calls.any(c, c.data[0..10] ==
// '0xa9059cbb')` over a batch whose first call has `data: '0x'` stopped at "index 10 is out of
// range", ended OUTCOME_ERROR, and the broad ALLOW signed the batch holding the ERC-20 transfer;
// so did `routes.any(r, r[0] == BAD)` after an empty route. `any`/`all`/`||`/`&&` now follow CEL:
// an error on one item or side does not hide a true `any`/`||` or a false `all`/`&&`.
import { describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT } from '../../src/testing/harness.ts'
import { delegated } from '../policies/delegated.ts'
import { signedFor, signTyped } from '../policies/typedData.ts'

const TOKEN = '0x2222222222222222222222222222222222222222'
const BAD = '0xbad0000000000000000000000000000000000bad'
const OTHER = '0x3333333333333333333333333333333333333333'
const TRANSFER = `0xa9059cbb${BAD.slice(2).padStart(64, '0')}${(10n ** 24n).toString(16).padStart(64, '0')}`

type Call = { to: string; value: string; data: string }

/** A typed batch of calls (what smart accounts sign: `Call { to, value, data }[]`). */
const batch = (calls: Call[]) => ({
  types: {
    EIP712Domain: [
      { name: 'name', type: 'string' },
      { name: 'chainId', type: 'uint256' },
    ],
    Call: [
      { name: 'to', type: 'address' },
      { name: 'value', type: 'uint256' },
      { name: 'data', type: 'bytes' },
    ],
    Batch: [{ name: 'calls', type: 'Call[]' }],
  },
  primaryType: 'Batch',
  domain: { name: 'SmartAccount', chainId: 1 },
  message: { calls },
})

/** A typed swap along routes of tokens (`address[][]`). */
const swap = (routes: string[][]) => ({
  types: {
    EIP712Domain: [
      { name: 'name', type: 'string' },
      { name: 'chainId', type: 'uint256' },
    ],
    Swap: [{ name: 'routes', type: 'address[][]' }],
  },
  primaryType: 'Swap',
  domain: { name: 'Router', chainId: 1 },
  message: { routes },
})

type Reply = Awaited<ReturnType<typeof signTyped>>
const seen = (reply: Reply, typed: unknown, signWith: string) => ({
  status: reply.status,
  outcome: reply.body.details?.outcome,
  signed: signedFor(reply, typed, signWith),
})
const refused = { status: 403, outcome: 'OUTCOME_DENY_EXPLICIT', signed: false }
const signed = (status = 200) => ({ status, outcome: undefined, signed: true })

describe('a DENY over a caller-filled list with an item its predicate throws on', () => {
  it('refuses an ERC-20 transfer in a batch after a call whose data is shorter than a selector', async () => {
    const t = await delegated([ETHEREUM_ACCOUNT])
    const signWith = t.sub.addresses![0] as string
    await t.allowSigning()
    await t.policy({
      policyName: 'no ERC-20 transfer in a batch',
      effect: 'EFFECT_DENY',
      condition:
        "activity.action == 'SIGN' && eth.eip_712.message.calls.any(c, c.data[0..10] == '0xa9059cbb')",
    })
    const sign = async (calls: Call[]) => {
      t.h.clock.advance(1)
      const typed = batch(calls)
      return seen(await signTyped(t, signWith, typed), typed, signWith)
    }
    const transfer = { to: TOKEN, value: '0', data: TRANSFER }
    const plain = { to: OTHER, value: '1', data: '0x' }
    // Controls: the transfer alone, or after an ordinary call, is refused.
    expect(await sign([transfer])).toEqual(refused)
    expect(await sign([{ to: OTHER, value: '0', data: '0xdeadbeef00' }, transfer])).toEqual(refused)
    // The attack: a plain ETH call (data '0x') first, on which `c.data[0..10]` throws.
    expect(await sign([plain, transfer])).toEqual(refused)
    expect(await sign([plain, plain, transfer, plain])).toEqual(refused)
    // A batch of plain calls only: the DENY errors on every item (no transfer found) and refuses
    // nothing, as before; the ALLOW signs it.
    expect(await sign([plain, { ...plain, value: '2' }])).toEqual(signed())
    await t.h.service.close()
  }, 120_000)

  it('refuses a swap through BAD after an empty route', async () => {
    const t = await delegated([ETHEREUM_ACCOUNT])
    const signWith = t.sub.addresses![0] as string
    await t.allowSigning()
    await t.policy({
      policyName: 'never swap out of BAD',
      effect: 'EFFECT_DENY',
      condition: `activity.action == 'SIGN' && eth.eip_712.message.routes.any(r, r[0] == '${BAD}')`,
    })
    const sign = async (routes: string[][]) => {
      t.h.clock.advance(1)
      const typed = swap(routes)
      return seen(await signTyped(t, signWith, typed), typed, signWith)
    }
    expect(
      await sign([
        [OTHER, TOKEN],
        [BAD, TOKEN],
      ]),
    ).toEqual(refused)
    expect(await sign([[], [BAD, TOKEN]])).toEqual(refused)
    expect(await sign([[OTHER], [], [], [BAD]])).toEqual(refused)
    // Controls: routes not out of BAD are signed, an empty one among them too.
    expect(await sign([[OTHER, TOKEN]])).toEqual(signed())
    expect(await sign([[], [OTHER, BAD]])).toEqual(signed())
    await t.h.service.close()
  }, 120_000)
})
