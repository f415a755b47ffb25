// What open sponsored sends cost the node while they wait: each look at a broadcast send begins
// with its sender's mined count (`eth_getTransactionCount(sender, latest)`), and every sponsored
// send has the same sender, the sponsor. Before: one count per send per pass (20 sends waiting, 20
// calls every 250 ms, the same answer). Now a pass asks it once per sender and chain, and its
// sends share the answer. anvil mines only when the test says.
import { describe, expect, it } from 'vitest'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { sponsorAddress } from '../../src/sending/sponsors.ts'
import { resultOf } from '../../src/testing/harness.ts'
import { chainForFile, passes } from './byHand.ts'
import { endUser, erc20Call, sponsoredService } from './sendSupport.ts'

const chain = chainForFile()
const SENDS = 20
const PASSES = 10

describe('open sponsored sends share their sender mined count in a pass', { timeout: 120_000 }, () => {
  it(`${SENDS} open sponsored sends of ${SENDS} end users: one eth_getTransactionCount(sponsor, latest) a pass, not ${SENDS}; each still seen mined`, async () => {
    const counts: string[][] = []
    const fetchFn: typeof fetch = async (input, init) => {
      const body = JSON.parse(String(init?.body)) as { method: string; params: string[] }
      if (body.method === 'eth_getTransactionCount') counts.push(body.params)
      return fetch(input, init)
    }
    const h = await sponsoredService(chain, {}, { worker: false, pollIntervalMs: 250 }, { fetch: fetchFn })
    const worker = startSendWorker(h.service.runtime, { loop: false })
    const sponsor = sponsorAddress(h.service.runtime)!
    await chain.rpc('evm_setAutomine', [false])
    try {
      const ids: string[] = []
      for (let i = 0; i < SENDS; i++) {
        const user = await endUser(h)
        const reply = await user.send({ sponsor: true, calls: [erc20Call('mint', user.from, 1n)] })
        ids.push(resultOf('eth_send_transaction', reply).sendTransactionStatusId as string)
      }
      await worker.pass() // broadcast, each at the sponsor's next nonce: the node holds them, unmined
      for (const id of ids)
        expect((await h.service.store.get('sendTransactions', id))!.status).toBe('BROADCASTED')

      counts.length = 0
      await passes(h, worker, PASSES, 250)
      const latest = counts.filter(([, block]) => block === 'latest')
      expect(latest.length, `${latest.length} mined counts in ${PASSES} passes`).toBe(PASSES)
      expect(new Set(latest.map(([address]) => address!.toLowerCase()))).toEqual(
        new Set([sponsor.toLowerCase()]),
      )

      // Mined: every send sees it, through the count its pass shared.
      await chain.rpc('evm_mine', [])
      counts.length = 0
      await passes(h, worker, 2, 250)
      for (const id of ids)
        expect((await h.service.store.get('sendTransactions', id))!.status).toBe('INCLUDED')
      expect(counts.filter(([, block]) => block === 'latest').length).toBeLessThanOrEqual(2)
    } finally {
      await chain.rpc('evm_setAutomine', [true])
      await worker.stop()
      await h.service.close()
    }
  })
})
