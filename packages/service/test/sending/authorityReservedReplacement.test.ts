// An end user whose sponsored batch carries its authorization (its first, delegating its account)
// keeps every replacement of it refused for as long as it likes: geth refuses a 7702 transaction
// whose authority has a transaction of its own pending ("authority already reserved", as
// `refusingNode` emulates), and a transaction of the user's own account priced under the base fee
// stays pending for free. Since 64afc80a a refused replacement went back to the version it
// replaced and, since 5e6b9043, was tried again each replace_after_ms, refused each time: priced
// under a risen base fee, that version was never mined, and every other user's sponsored send
// waited behind the sponsor's nonce for as long as the user kept its transaction pending. Now the
// refused replacement is made again without the authorization (same batch, nonce and fees): it is
// mined, the batch does not run (the account never delegated), the send ends FAILED saying so with
// its spending-limit reservation still counted, and the other user's send is mined next. Nodes
// word the refusal differently (Nethermind: "delegation authority has pending transaction"; its
// words were missed once, from the audit of 88b93aa8), so whatever the words, a refusal while the
// account keeps a transaction of its own pending is taken as the user's.
import { Transaction } from 'micro-eth-signer'
import { describe, expect, it } from 'vitest'
import { nonceIdOf } from '../../src/sending/sendingState.ts'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { type Harness, limitedSubOrganization, resultOf } from '../../src/testing/harness.ts'
import { CAIP2, chainForFile, DEAD, mineAtBaseFee } from './byHand.ts'
import { endUser, erc20Call, sponsoredService } from './sendSupport.ts'

const chain = chainForFile()
const STEP_MS = 5000

const rowOf = async (h: Harness, id: string) => (await h.service.store.get('sendTransactions', id))!
const authorizationsOf = (signed: string) =>
  (Transaction.fromHex(signed).raw as { authorizationList?: { nonce: bigint }[] }).authorizationList

/** How a node refuses a 7702 transaction whose authority keeps a transaction of its own pending. */
const REFUSALS = [
  { node: 'geth', code: -32000, message: 'authority already reserved' },
  { node: 'Nethermind', code: -32010, message: 'delegation authority has pending transaction' },
  {
    node: 'a node in words the service does not know',
    code: -32000,
    message: 'transaction rejected by pool',
  },
]

describe.each(REFUSALS)(
  'a sponsored send whose replacements its end user keeps refused ($node)',
  { timeout: 240_000 },
  (refusal) => {
    it("is made again without its authorization and ends FAILED, not holding another user's sponsored send", async () => {
      let attacker = ''
      let reserved = false
      const refusals: string[] = []
      // The node's answer to a 7702 transaction whose authority (the attacker's account) keeps a
      // transaction of its own pending, and that account's pending count, one past its mined one:
      // every other call reaches anvil.
      const fetchFn: typeof fetch = async (input, init) => {
        const body = JSON.parse(String(init?.body)) as { id: number; method: string; params: string[] }
        const reply = (answer: object) =>
          new Response(JSON.stringify({ jsonrpc: '2.0', id: body.id, ...answer }), {
            headers: { 'content-type': 'application/json' },
          })
        if (
          body.method === 'eth_getTransactionCount' &&
          reserved &&
          String(body.params[0]).toLowerCase() === attacker &&
          body.params[1] === 'pending'
        ) {
          const mined = BigInt(
            (await chain.rpc('eth_getTransactionCount', [body.params[0], 'latest'])) as string,
          )
          return reply({ result: `0x${(mined + 1n).toString(16)}` })
        }
        if (body.method === 'eth_sendRawTransaction' && reserved) {
          const tx = Transaction.fromHex(body.params[0]!)
          const raw = tx.raw as { to?: string; authorizationList?: unknown[] }
          if (String(raw.to).toLowerCase() === attacker && (raw.authorizationList?.length ?? 0) > 0) {
            refusals.push(tx.hash)
            return reply({ error: { code: refusal.code, message: refusal.message } })
          }
        }
        return fetch(input, init)
      }
      const h = await sponsoredService(chain, {}, { worker: false, pollIntervalMs: 250 }, { fetch: fetchFn })
      const worker = startSendWorker(h.service.runtime, { loop: false })
      await chain.rpc('evm_setAutomine', [false])
      try {
        // The attacker's account sends 5 wei in its sponsored batch, under a native spending limit.
        const bad = await limitedSubOrganization(h, { amount: '1000', caip2: CAIP2 })
        attacker = bad.from.toLowerCase()
        await chain.fund(bad.from, 10n ** 15n)
        await chain.rpc('evm_mine', [])
        const used = async () =>
          BigInt(
            (await h.query('latchkey_list_spending_limits', {}, bad)).body.spendingLimits.find(
              (limit: { spendingLimitId: string }) => limit.spendingLimitId === bad.spendingLimitId,
            ).used,
          )
        h.clock.set(Date.now())
        const badId = resultOf(
          'eth_send_transaction',
          await h.submit(
            'eth_send_transaction',
            { from: bad.from, caip2: CAIP2, sponsor: true, calls: [{ to: DEAD, value: '5' }] },
            bad,
          ),
        ).sendTransactionStatusId as string
        await worker.pass() // broadcast: the node holds it, unmined
        const first = await rowOf(h, badId)
        expect(first.status).toBe('BROADCASTED')
        const authorization = authorizationsOf(first.signedTransaction)
        expect(authorization?.length).toBe(1)
        expect(await used()).toBe(5n)
        const firstFee = BigInt(first.fees!.maxFeePerGas)

        // The attacker keeps a transaction of its own pending: its authority is reserved from now.
        reserved = true
        // Blocks go on at a base fee above the first version's price (a replacement's +25% clears it).
        const baseFee = firstFee + firstFee / 10n
        const mine = () => mineAtBaseFee(chain, baseFee)
        await mine()
        // Another end user sends, sponsored, behind the sponsor's nonce.
        const victim = await endUser(h)
        const at = h.clock.now()
        const victimId = resultOf(
          'eth_send_transaction',
          await victim.send({ sponsor: true, calls: [erc20Call('mint', victim.from, 3n)] }),
        ).sendTransactionStatusId as string
        h.clock.set(at)

        // Passes of 5 s, a block each, the attacker's authority reserved throughout: the victim's
        // send is mined within a few minutes (its first replace_after_ms, a refusal, a block or two).
        let passes = 0
        while (passes < (5 * 60_000) / STEP_MS) {
          passes++
          h.clock.advance(STEP_MS)
          await worker.pass()
          await mine()
          if ((await rowOf(h, victimId)).status === 'INCLUDED') break
        }
        // One more pass sees the attacker's send's receipt if it is not seen yet.
        h.clock.advance(STEP_MS)
        await worker.pass()
        const [held, later] = [await rowOf(h, badId), await rowOf(h, victimId)]
        expect(later.status, "the victim's sponsored send waits behind the attacker's").toBe('INCLUDED')
        expect(passes).toBeLessThanOrEqual(20)
        // Refused once, then made again without the authorization: not tried again as it was.
        expect(refusals.length).toBe(1)
        expect(authorizationsOf(held.signedTransaction)).toBeUndefined()
        expect(Transaction.fromHex(held.signedTransaction).type).toBe('eip1559')
        expect(held.fees?.maxFeePerGas).not.toBe(first.fees!.maxFeePerGas)
        // The truth: mined, the batch did not run (the account never delegated), its fee paid.
        expect(held.status).toBe('FAILED')
        expect(held.error?.message).toMatch(/^the batch did not run: /)
        expect(held.receipt?.status).toBe('success')
        expect(await chain.rpc('eth_getCode', [bad.from, 'latest'])).toBe('0x')
        // Signed: what it reserved under the spending limit stays counted.
        expect(await used()).toBe(5n)
        // The authorization's nonce, never used, is a hole the account's next send takes.
        const counter = await h.service.store.get('nonces', nonceIdOf(CAIP2, bad.from))
        expect(counter?.holes).toEqual([authorization![0]!.nonce.toString()])
      } finally {
        await chain.rpc('evm_setAutomine', [true])
        await worker.stop()
        await h.service.close()
      }
    })
  },
)
