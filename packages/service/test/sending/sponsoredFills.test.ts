// What a refused sponsored send's fill costs the sponsor is counted against the caps of the user
// who sent it. A user once priced sponsored sends at the latest base fee with the tip left out (the
// tip floor was checked only on a named tip), so the caps counted them at 100 wei a gas; when the
// base fee rose before the broadcast, the node refused the first, and, its sponsor nonce being
// behind a later one, the worker filled it with a 0-value transfer at the market's price that no
// cap counted: the sponsor paid 21 times the user's daily wei cap for one send. Now a max fee that
// leaves a tip under the floor is refused like a named one, and the fill is counted (past the cap
// if it must be: the nonce has to be filled), so the user's next sponsored send finds the cap used.
import { Transaction } from 'micro-eth-signer'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillIdOf } from '../../src/sending/evmSender.ts'
import { sponsorAddress } from '../../src/sending/sponsors.ts'
import { resultOf } from '../../src/testing/harness.ts'
import { type Chain, endUser, erc20Call, sponsoredService, startChain } from '../sending/sendSupport.ts'

let chain: Chain
const DEAD = '0x000000000000000000000000000000000000dead'

beforeAll(async () => {
  chain = await startChain()
}, 60_000)

afterAll(async () => {
  await chain?.node.close()
})

const nonceOf = (raw: string) => (Transaction.fromHex(raw).raw as { nonce: bigint }).nonce

describe("fills of refused sponsored sends and the user's wei caps", () => {
  it("a fill's cost is counted against the caps of the user whose refused send it fills, and their next send is refused", async () => {
    // A quiet market: the latest block's base fee is 100 wei.
    await chain.rpc('anvil_setNextBlockBaseFeePerGas', ['0x64'])
    await chain.rpc('evm_mine', [])
    // Room for the two sends (about 1.8e14 wei each at the most their replacements may offer from
    // the least price), not for them and the fill (21,000 gas at the market's 1 gwei tip, about
    // 2.1e13 wei).
    const cap = 37n * 10n ** 13n
    let first = -1n
    let signedSecond = () => {}
    const secondSigned = new Promise<void>((resolve) => {
      signedSecond = resolve
    })
    let firstFailed = () => {}
    const firstDone = new Promise<void>((resolve) => {
      firstFailed = resolve
    })
    let heldFirst = false
    const fetchThrough: typeof fetch = async (input, init) => {
      const body = JSON.parse(String(init?.body)) as { method: string; params: string[] }
      if (body.method === 'eth_sendRawTransaction' && first >= 0n) {
        const nonce = nonceOf(body.params[0]!)
        if (nonce === first && !heldFirst) {
          heldFirst = true
          await secondSigned
          // The market moves before the broadcast: the next block's base fee is 1 gwei.
          await chain.rpc('anvil_setNextBlockBaseFeePerGas', [`0x${(10n ** 9n).toString(16)}`])
        } else if (nonce === first + 1n) await firstDone
      }
      return fetch(input, init)
    }
    const h = await sponsoredService(
      chain,
      { perUserPerDayWei: String(cap), perOrganizationPerMonthWei: String(cap) },
      { replaceAfterMs: 60_000 },
      { fetch: fetchThrough },
    )
    const sponsor = sponsorAddress(h.service.runtime)!
    first = BigInt((await chain.rpc('eth_getTransactionCount', [sponsor, 'pending'])) as string)
    const before = await chain.balance(sponsor)
    const user = await endUser(h)
    // Priced at the least the floors allow: the latest base fee plus half the node's tip.
    const suggested = BigInt((await chain.rpc('eth_maxPriorityFeePerGas', [])) as string)
    const least = String(100n + suggested / 2n)
    const a = await user.send({ sponsor: true, calls: [erc20Call('mint', DEAD, 1n)], maxFeePerGas: least })
    expect(a.status, JSON.stringify(a.body)).toBe(200)
    const aId = resultOf('eth_send_transaction', a).sendTransactionStatusId as string
    const b = await user.send({ sponsor: true, calls: [erc20Call('mint', DEAD, 2n)], maxFeePerGas: least })
    expect(b.status, JSON.stringify(b.body)).toBe(200)
    signedSecond()
    // Wait for the first send to end, and for its fill (if any) to be mined.
    const until = Date.now() + 20_000
    for (;;) {
      h.clock.set(Date.now())
      const row = await h.service.store.get('sendTransactions', aId)
      const fill = await h.service.store.get('sendTransactions', fillIdOf(aId))
      if (row?.status === 'FAILED') firstFailed()
      if (row?.status === 'FAILED' && (!fill || fill.status === 'INCLUDED')) break
      if (row?.status === 'INCLUDED') break
      if (Date.now() > until) break
      await new Promise((resolve) => setTimeout(resolve, 30))
    }
    firstFailed()
    const counted = (await h.service.store.all('gasUsage'))
      .filter((row) => row.userDay.endsWith('|wei'))
      .reduce((sum, row) => sum + BigInt(row.gas), 0n)
    const paid = before - (await chain.balance(sponsor))
    const fill = await h.service.store.get('sendTransactions', fillIdOf(aId))
    expect((await h.service.store.get('sendTransactions', aId))?.status).toBe('FAILED')
    expect(fill?.status).toBe('INCLUDED')
    // Everything the sponsor paid (the second send and the fill) is counted, the fill at its max fee.
    expect(
      counted >= paid,
      `the sponsor paid ${paid} wei (fill ${fill?.fees?.maxFeePerGas ?? '-'} wei/gas × 21000); the caps counted ${counted}`,
    ).toBe(true)
    const fillRows = (await h.service.store.all('gasUsage')).filter(
      (row) => row.sendTransactionId === fill!.id,
    )
    expect(fillRows.map((row) => row.gas).sort()).toEqual(
      ['21000', String(21_000n * BigInt(fill!.fees!.maxFeePerGas))].sort(),
    )
    // Counted past the cap at signing (the fill forced): what a mined send is given back once it
    // is mined (its own row) aside.
    const countedAtSigning = (await h.service.store.all('gasUsage'))
      .filter((row) => row.userDay.endsWith('|wei') && !row.id.endsWith('.settled'))
      .reduce((sum, row) => sum + BigInt(row.gas), 0n)
    expect(countedAtSigning).toBeGreaterThan(cap)
    // The cap is used: the user's next sponsored send is refused before anything is signed.
    const c = await user.send({ sponsor: true, calls: [erc20Call('mint', DEAD, 3n)] })
    expect(c).toMatchObject({
      status: 429,
      body: { details: { errorCode: 'GAS_CAP_EXCEEDED', cap: 'per-user daily wei' } },
    })
    await h.service.close()
  }, 60_000)

  it("a sponsored send's tip is at least half the node's suggestion, named or left to the max fee", async () => {
    await chain.rpc('anvil_setNextBlockBaseFeePerGas', ['0x64'])
    await chain.rpc('evm_mine', [])
    const suggested = BigInt((await chain.rpc('eth_maxPriorityFeePerGas', [])) as string)
    const h = await sponsoredService(chain, {}, { worker: false })
    const user = await endUser(h)
    // Naming the tip under the floor is refused...
    const named = await user.send({
      sponsor: true,
      calls: [erc20Call('mint', DEAD, 1n)],
      maxFeePerGas: '100',
      maxPriorityFeePerGas: '100',
    })
    expect(named.status).toBe(400)
    // ...and so is leaving it out with a max fee that leaves no more than that over the base fee.
    const unnamed = await user.send({
      sponsor: true,
      calls: [erc20Call('mint', DEAD, 2n)],
      maxFeePerGas: '100',
    })
    expect(unnamed).toMatchObject({
      status: 400,
      body: { details: { field: 'parameters.maxFeePerGas', floor: String(100n + suggested / 2n) } },
    })
    // A max fee that leaves the floor's tip over the base fee is signed.
    const enough = await user.send({
      sponsor: true,
      calls: [erc20Call('mint', DEAD, 3n)],
      maxFeePerGas: String(100n + suggested / 2n),
    })
    expect(enough.status, JSON.stringify(enough.body)).toBe(200)
    await h.service.close()
  }, 60_000)
})
