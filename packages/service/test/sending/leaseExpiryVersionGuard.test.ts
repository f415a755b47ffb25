// Two instances on one send. Instance A's claim of a sponsored replacement carrying the user's
// authorization outlives its lease while A waits (a slow database or node answer); instance B
// claims the send, gets the same refusal ("authority already reserved"), makes the batch again
// without the authorization (version Y) and broadcasts Y. A then got its refusal and wrote its own
// authorization-less version X over the row: Y, mined, was tracked by neither txHash nor
// priorHashes, and the send ended FAILED "no version of this send was mined" while the sponsor paid
// Y's fee. A version is now written only over the version it was refused (`whileVersion`): the
// send ends as Y did (FAILED "the batch did not run", its receipt recorded). From the audit of
// 3b442212.
import { Transaction } from 'micro-eth-signer'
import { describe, expect, it } from 'vitest'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { type Harness, limitedSubOrganization, resultOf } from '../../src/testing/harness.ts'
import { CAIP2, chainForFile, DEAD, mineAtBaseFee } from './byHand.ts'
import { sponsoredService } from './sendSupport.ts'

const chain = chainForFile()
const STEP_MS = 5000

const rowOf = async (h: Harness, id: string) => (await h.service.store.get('sendTransactions', id))!

describe('two instances make a refused sponsored replacement again without its authorization', {
  timeout: 240_000,
}, () => {
  it('the version broadcast and mined is the one the send ends by', async () => {
    let attacker = ''
    let reserved = false
    let stallFirst: (() => Promise<void>) | undefined
    const yHashes: string[] = []
    const fetchFn: typeof fetch = async (input, init) => {
      const body = JSON.parse(String(init?.body)) as { id: number; method: string; params: string[] }
      if (body.method === 'eth_sendRawTransaction' && reserved) {
        const tx = Transaction.fromHex(body.params[0]!)
        const raw = tx.raw as { to?: string; authorizationList?: unknown[] }
        if (String(raw.to).toLowerCase() === attacker && (raw.authorizationList?.length ?? 0) > 0) {
          const stall = stallFirst
          stallFirst = undefined
          if (stall) await stall() // instance A waits here past its lease
          const error = { code: -32000, message: 'authority already reserved' }
          return new Response(JSON.stringify({ jsonrpc: '2.0', id: body.id, error }), {
            headers: { 'content-type': 'application/json' },
          })
        }
        if (String(raw.to).toLowerCase() === attacker) yHashes.push(tx.hash)
      }
      return fetch(input, init)
    }
    const h = await sponsoredService(chain, {}, { worker: false, pollIntervalMs: 250 }, { fetch: fetchFn })
    const a = startSendWorker(h.service.runtime, { loop: false })
    const b = startSendWorker(h.service.runtime, { loop: false })
    await chain.rpc('evm_setAutomine', [false])
    try {
      const bad = await limitedSubOrganization(h, { amount: '1000', caip2: CAIP2 })
      attacker = bad.from.toLowerCase()
      await chain.fund(bad.from, 10n ** 15n)
      await chain.rpc('evm_mine', [])
      h.clock.set(Date.now())
      const id = resultOf(
        'eth_send_transaction',
        await h.submit(
          'eth_send_transaction',
          { from: bad.from, caip2: CAIP2, sponsor: true, calls: [{ to: DEAD, value: '5' }] },
          bad,
        ),
      ).sendTransactionStatusId as string
      await a.pass()
      const first = await rowOf(h, id)
      expect(first.status).toBe('BROADCASTED')
      const firstFee = BigInt(first.fees!.maxFeePerGas)
      reserved = true
      const baseFee = firstFee + firstFee / 10n
      const mine = () => mineAtBaseFee(chain, baseFee)
      await mine()
      // While A's broadcast of the replacement waits, its lease runs out: B claims the send,
      // is refused the same, makes it again without the authorization, and broadcasts that.
      stallFirst = async () => {
        h.clock.advance(10 * 60_000)
        await b.pass() // B: refused, made again without the authorization (Y)
        await b.pass() // B: Y broadcast
      }
      for (let passes = 0; passes < 40; passes++) {
        h.clock.advance(STEP_MS)
        await a.pass()
        if (stallFirst === undefined) break
        await mine()
      }
      expect(yHashes.length, 'B broadcast its version without the authorization').toBe(1)
      // Y mined; the send followed to its end (past the nonce-taken confirmation).
      for (let i = 0; i < 30; i++) {
        await mine()
        h.clock.advance(60_000)
        await a.pass()
        const row = await rowOf(h, id)
        if (row.status === 'FAILED' || row.status === 'INCLUDED') break
      }
      const receipt = (await chain.rpc('eth_getTransactionReceipt', [yHashes[0]])) as {
        status: string
      } | null
      expect(receipt?.status, 'Y was mined, the sponsor paid its fee').toBe('0x1')
      const end = await rowOf(h, id)
      const tracked = [end.txHash, ...(end.priorHashes ?? [])].map((x) => x.toLowerCase())
      expect(end.status).toBe('FAILED')
      expect(end.error?.message).toMatch(/^the batch did not run: /)
      expect(tracked, 'the mined version Y is tracked').toContain(yHashes[0]!.toLowerCase())
    } finally {
      await chain.rpc('evm_setAutomine', [true])
      await a.stop()
      await b.stop()
      await h.service.close()
    }
  })
})
