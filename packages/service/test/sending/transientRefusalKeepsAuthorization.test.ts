// An honest end user's first sponsored batch carries the user's EIP-7702 authorization. Its first
// version waits under a risen base fee; its replacement is refused ONCE by the node for a passing
// reason neither the sponsor nor the user causes ("txpool is full", geth's ErrTxPoolOverflow; a
// hosted node's JSON-RPC rate limit). 3b442212 dropped the authorization on any refusal but funds,
// fee caps and price: the batch went out without it, ran none of the user's calls, the sponsor paid
// its fee, and the send ended FAILED "the batch did not run". Only a refusal the user can keep up
// ("authority already reserved") drops it now; a passing one is retried as it is, and the batch
// runs with its authorization: INCLUDED (from the audit of 3b442212).
import { Transaction } from 'micro-eth-signer'
import { describe, expect, it } from 'vitest'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { type Harness, resultOf } from '../../src/testing/harness.ts'
import { chainForFile, mineAtBaseFee } from './byHand.ts'
import { endUser, erc20Call, sponsoredService } from './sendSupport.ts'

const chain = chainForFile()
const STEP_MS = 5000

const rowOf = async (h: Harness, id: string) => (await h.service.store.get('sendTransactions', id))!
const authorizationsOf = (signed: string) =>
  (Transaction.fromHex(signed).raw as { authorizationList?: { nonce: bigint }[] }).authorizationList

for (const message of ['txpool is full', 'daily request count exceeded, request rate limited']) {
  describe(`an honest user's sponsored first batch whose replacement is refused once: "${message}"`, {
    timeout: 240_000,
  }, () => {
    it('keeps its authorization and runs (INCLUDED), not FAILED "the batch did not run"', async () => {
      let user = ''
      let refuseOnce = false
      const refusals: string[] = []
      const fetchFn: typeof fetch = async (input, init) => {
        const body = JSON.parse(String(init?.body)) as { id: number; method: string; params: string[] }
        if (body.method === 'eth_sendRawTransaction' && refuseOnce) {
          const tx = Transaction.fromHex(body.params[0]!)
          const raw = tx.raw as { to?: string; authorizationList?: unknown[] }
          if (String(raw.to).toLowerCase() === user && (raw.authorizationList?.length ?? 0) > 0) {
            refuseOnce = false
            refusals.push(tx.hash)
            const error = { code: -32000, message }
            return new Response(JSON.stringify({ jsonrpc: '2.0', id: body.id, error }), {
              headers: { 'content-type': 'application/json' },
            })
          }
        }
        return fetch(input, init)
      }
      const h = await sponsoredService(chain, {}, { worker: false, pollIntervalMs: 250 }, { fetch: fetchFn })
      const worker = startSendWorker(h.service.runtime, { loop: false })
      await chain.rpc('evm_setAutomine', [false])
      try {
        const honest = await endUser(h)
        user = honest.from.toLowerCase()
        const id = resultOf(
          'eth_send_transaction',
          await honest.send({ sponsor: true, calls: [erc20Call('mint', honest.from, 3n)] }),
        ).sendTransactionStatusId as string
        await worker.pass()
        const first = await rowOf(h, id)
        expect(first.status).toBe('BROADCASTED')
        expect(authorizationsOf(first.signedTransaction)?.length).toBe(1)
        const firstFee = BigInt(first.fees!.maxFeePerGas)
        // The base fee rises past the first version's price: a replacement is due; the node
        // refuses that replacement once, transiently.
        refuseOnce = true
        const baseFee = firstFee + firstFee / 10n
        const mine = () => mineAtBaseFee(chain, baseFee)
        await mine()
        for (let passes = 0; passes < 60; passes++) {
          h.clock.advance(STEP_MS)
          await worker.pass()
          await mine()
          const now = await rowOf(h, id)
          if (now.status !== 'BROADCASTED' && now.status !== 'PENDING') break
        }
        h.clock.advance(STEP_MS)
        await worker.pass()
        const end = await rowOf(h, id)
        expect(refusals.length).toBe(1)
        // Safe: the batch keeps its authorization and runs.
        expect(
          end.error?.message,
          'a single transient refusal dropped the authorization: the honest batch did not run, the sponsor paid',
        ).toBeUndefined()
        expect(authorizationsOf(end.signedTransaction)?.length).toBe(1)
        expect(end.status).toBe('INCLUDED')
        expect(await chain.rpc('eth_getCode', [honest.from, 'latest'])).not.toBe('0x')
      } finally {
        await chain.rpc('evm_setAutomine', [true])
        await worker.stop()
        await h.service.close()
      }
    })
  })
}
