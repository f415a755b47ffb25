// One end user's sponsored send must not hold the sponsor's shared nonce. A send priced at the
// least the floors allow (the latest base fee plus half the node's tip) is mined only once the
// worker replaces it past a risen base fee (one block more than half full raises it 12.5%); one
// that cannot be replaced holds every other user's sponsored send behind its nonce for as long as
// the base fee stays up. Its sender once made it so in three ways: a gas limit using the whole
// rest of their daily wei cap (the caps then refused each replacement's raise), a tip at the
// sponsor's `max_priority_fee_per_gas` ceiling (the raised tip passed it), or deleting their
// sub-organization (no ceiling or cap was left to judge a raise by). Now the caps count a
// sponsored send at signing at the most its replacements may offer, so none is refused later; its
// tip starts low enough that its raises stay under the ceiling; and one whose sub-organization is
// deleted is replaced under its parent's ceilings.
import { Transaction } from 'micro-eth-signer'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SendTransactionRow } from '../../src/kernel/store/model.ts'
import type { GasCaps } from '../../src/sending/SendingOptions.ts'
import { OPEN_STATUSES } from '../../src/sending/sendingState.ts'
import { type Json, resultOf } from '../../src/testing/harness.ts'
import { type Chain, endUser, erc20Call, sponsoredService, startChain } from './sendSupport.ts'

let chain: Chain
const DEAD = '0x000000000000000000000000000000000000dead'
const GWEI = 10n ** 9n
const hex = (n: bigint) => `0x${n.toString(16)}`
/** The default replacements: +25% (rounded up), 3 times. */
const REPLACEMENTS = { maxReplacements: 3 }
/** The highest tip whose three raises stay at or under `ceiling`. */
const mostStartingTip = (ceiling: bigint) => {
  let tip = ceiling
  for (let i = 0; i < REPLACEMENTS.maxReplacements; i++) tip = (tip * 100n) / 125n
  return tip
}
const mostAfterReplacements = (fee: bigint) => {
  let most = fee
  for (let i = 0; i < REPLACEMENTS.maxReplacements; i++) most = (most * 125n + 99n) / 100n
  return most
}

beforeAll(async () => {
  chain = await startChain()
}, 60_000)

afterAll(async () => {
  await chain?.rpc('evm_setAutomine', [true]).catch(() => undefined)
  await chain?.node.close()
})

type Harness = Awaited<ReturnType<typeof sponsoredService>>
type User = Awaited<ReturnType<typeof endUser>>

/** Whether the worker has recorded a final status for `row` (it no longer tracks it). */
const final = (row: SendTransactionRow) => !(OPEN_STATUSES as readonly string[]).includes(row.status)

/**
 * Once the send's row is at `status`, the service's clock following real time meanwhile (the
 * test's timeout bounds the wait); throws once it is final at another status, which it never
 * leaves.
 */
async function waitFor(h: Harness, id: string, status: SendTransactionRow['status']) {
  for (;;) {
    h.clock.set(Date.now())
    const row = (await h.service.store.get('sendTransactions', id))!
    if (row.status === status) return
    if (final(row))
      throw new Error(`send ${id} is ${row.status}, not ${status}: ${JSON.stringify(row.error)}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/**
 * A quiet market (1 gwei base fee, blocks mined by hand); `attack` signs the attacker's sponsored
 * send (given the least price the floors allow) and answers its id; once it is broadcast, `after`
 * runs, the market's base fee rises 60% and stays there, and another end user sends. Answers both
 * sends' rows once the worker has recorded both final, or after about 60 replaceAfterMs periods.
 */
async function scenario(
  caps: GasCaps,
  attack: (h: Harness, attacker: User, least: bigint, suggested: bigint) => Promise<string>,
  after?: (h: Harness, attacker: User) => Promise<void>,
) {
  const h = await sponsoredService(chain, caps, { replaceAfterMs: 100 })
  const attacker = await endUser(h)
  const victim = await endUser(h)
  // Each user's account delegates first (so the sends below carry no authorization).
  for (const user of [attacker, victim]) {
    const id = resultOf(
      'eth_send_transaction',
      await user.send({ sponsor: true, gasLimit: '300000', calls: [erc20Call('mint', DEAD, 1n)] }),
    ).sendTransactionStatusId as string
    await waitFor(h, id, 'INCLUDED')
  }
  await chain.rpc('evm_setAutomine', [false])
  try {
    await chain.rpc('anvil_setNextBlockBaseFeePerGas', [hex(GWEI)])
    await chain.rpc('evm_mine', [])
    const suggested = BigInt((await chain.rpc('eth_maxPriorityFeePerGas', [])) as string)
    const aId = await attack(h, attacker, GWEI + suggested / 2n, suggested)
    await waitFor(h, aId, 'BROADCASTED')
    await after?.(h, attacker)
    const high = (16n * GWEI) / 10n
    await chain.rpc('anvil_setNextBlockBaseFeePerGas', [hex(high)])
    await chain.rpc('evm_mine', [])
    const v = await victim.send({ sponsor: true, calls: [erc20Call('mint', DEAD, 3n)] })
    expect(v.status, JSON.stringify(v.body)).toBe(200)
    const vId = resultOf('eth_send_transaction', v).sendTransactionStatusId as string
    // The victim's send is mined in the attacker's block or after it (its nonce is next), but the
    // worker records each on its own: the victim's may be recorded INCLUDED while the attacker's
    // mined version is not yet (a row broadcast since the clock last moved is not due; one being
    // replaced again is PENDING until its broadcast finds the nonce taken). Both are awaited.
    for (let i = 0; i < 60; i++) {
      h.clock.set(Date.now())
      await chain.rpc('anvil_setNextBlockBaseFeePerGas', [hex(high)])
      await chain.rpc('evm_mine', [])
      await new Promise((r) => setTimeout(r, 100))
      const rows = await Promise.all([aId, vId].map((id) => h.service.store.get('sendTransactions', id)))
      if (rows.every((row) => final(row!))) break
    }
    return {
      h,
      attackerRow: (await h.service.store.get('sendTransactions', aId))!,
      victimRow: (await h.service.store.get('sendTransactions', vId))!,
    }
  } finally {
    await chain.rpc('evm_setAutomine', [true])
  }
}

const sent = async (reply: Awaited<ReturnType<User['send']>>) => {
  expect(reply.status, JSON.stringify(reply.body)).toBe(200)
  return resultOf('eth_send_transaction', reply).sendTransactionStatusId as string
}

/** The wei the caps counted so far for `organizationId` today. */
const weiUsed = async (h: Harness, organizationId: string) =>
  (await h.service.store.all('gasUsage'))
    .filter((r) => r.userDay.includes(organizationId) && r.userDay.endsWith('|wei'))
    .reduce((s, r) => s + BigInt(r.gas), 0n)

describe("one end user's floor-priced sponsored send and the sponsor's shared nonce", {
  timeout: 60_000,
}, () => {
  it("control: with cap room it is replaced past a risen base fee; the next user's send is included", async () => {
    const { h, attackerRow, victimRow } = await scenario(
      { perUserPerDayWei: String(10n ** 16n) },
      (_h, a, least) =>
        a
          .send({
            sponsor: true,
            gasLimit: '1000000',
            maxFeePerGas: String(least),
            calls: [erc20Call('mint', DEAD, 2n)],
          })
          .then(sent),
    )
    expect(attackerRow.status).toBe('INCLUDED')
    expect(attackerRow.replacements).toBeGreaterThan(0)
    expect(victimRow.status).toBe('INCLUDED')
    await h.service.close()
  })

  it('its gas limit cannot use the daily wei cap its replacements need: the caps count them at signing, and never refuse one', async () => {
    const cap = 10n ** 16n
    let gasLimit = 0n
    let most = 0n
    const { h, attackerRow, victimRow } = await scenario(
      { perUserPerDayWei: String(cap) },
      async (h, a, least) => {
        const rest = cap - (await weiUsed(h, a.organizationId))
        const send = (limit: bigint) =>
          a.send({
            sponsor: true,
            gasLimit: String(limit),
            maxFeePerGas: String(least),
            calls: [erc20Call('mint', DEAD, 2n)],
          })
        // The whole rest of the day's cap at its price leaves nothing for its replacements: refused.
        const whole = await send(rest / least)
        expect(whole.status, JSON.stringify(whole.body)).toBe(429)
        expect(whole.body.details).toMatchObject({ errorCode: 'GAS_CAP_EXCEEDED', cap: 'per-user daily wei' })
        // The most the cap takes: its gas limit at the most its replacements may offer.
        most = mostAfterReplacements(least)
        gasLimit = rest / most
        const id = await send(gasLimit).then(sent)
        expect(await h.service.store.get('sendTransactions', id)).toMatchObject({
          prepaidMaxFeePerGas: String(most),
        })
        expect(await weiUsed(h, a.organizationId)).toBe(cap - rest + gasLimit * most)
        return id
      },
    )
    expect(attackerRow.status).toBe('INCLUDED')
    expect(attackerRow.replacements).toBeGreaterThan(0)
    expect(victimRow.status).toBe('INCLUDED')
    // Its replacements counted nothing more (once mined, what it did not cost was given back).
    const rows = (await h.service.store.all('gasUsage')).filter(
      (r) =>
        r.sendTransactionId === attackerRow.id && r.userDay.endsWith('|wei') && !r.id.endsWith('.settled'),
    )
    expect(rows.map((r) => r.gas)).toEqual([String(gasLimit * most)])
    await h.service.close()
  })

  it("its tip cannot be one whose raises pass the sponsor's tip ceiling: a 400 naming the most it may start at; at that, it is replaced under the ceiling", async () => {
    const suggested = BigInt((await chain.rpc('eth_maxPriorityFeePerGas', [])) as string)
    // The ceiling at the node's suggestion: half of it (the floor) and more may be named.
    const tipCeiling = suggested
    const maximum = mostStartingTip(tipCeiling)
    const { h, attackerRow, victimRow } = await scenario(
      { maxPriorityFeePerGas: String(tipCeiling) },
      async (_h, a, least) => {
        const send = (tip: bigint) =>
          a.send({
            sponsor: true,
            gasLimit: '1000000',
            maxFeePerGas: String(least),
            maxPriorityFeePerGas: String(tip),
            calls: [erc20Call('mint', DEAD, 2n)],
          } as Json)
        for (const tip of [tipCeiling, maximum + 1n]) {
          const refused = await send(tip)
          expect(refused.status, JSON.stringify(refused.body)).toBe(400)
          expect(refused.body.details).toMatchObject({
            errorCode: 'FIELD_INVALID',
            field: 'parameters.maxPriorityFeePerGas',
            maximum: String(maximum),
            ceiling: String(tipCeiling),
          })
        }
        return send(maximum).then(sent)
      },
    )
    expect(attackerRow.status).toBe('INCLUDED')
    expect(attackerRow.replacements).toBeGreaterThan(0)
    const tip = (Transaction.fromHex(attackerRow.signedTransaction).raw as { maxPriorityFeePerGas: bigint })
      .maxPriorityFeePerGas
    expect(tip).toBeLessThanOrEqual(tipCeiling)
    expect(victimRow.status).toBe('INCLUDED')
    // The node's suggestion is lowered to the most a send may start at too: its replacements
    // stayed under the ceiling.
    expect(BigInt(victimRow.fees!.maxPriorityFeePerGas)).toBeLessThanOrEqual(tipCeiling)
    await h.service.close()
  })

  it('deleting its sub-organization does not leave it unreplaced: it is replaced under its parent’s ceilings, its replacements paid for', async () => {
    const cap = 10n ** 16n
    const { h, attackerRow, victimRow } = await scenario(
      { perUserPerDayWei: String(cap) },
      (_h, a, least) =>
        a
          .send({
            sponsor: true,
            gasLimit: '1000000',
            maxFeePerGas: String(least),
            calls: [erc20Call('mint', DEAD, 2n)],
          })
          .then(sent),
      async (h, a) => {
        h.clock.set(Date.now())
        resultOf(
          'delete_sub_organization',
          await h.submit('delete_sub_organization', { deleteWithoutExport: true }, a.as),
        )
        expect(await h.service.store.get('organizations', a.organizationId)).toBeUndefined()
      },
    )
    expect(attackerRow.status).toBe('INCLUDED')
    expect(attackerRow.replacements).toBeGreaterThan(0)
    expect(BigInt(attackerRow.fees!.maxFeePerGas)).toBeLessThanOrEqual(
      BigInt(attackerRow.prepaidMaxFeePerGas!),
    )
    expect(victimRow.status).toBe('INCLUDED')
    await h.service.close()
  })
})
