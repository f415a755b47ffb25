// A hole of an account's counter (here: the nonce of a user's fill that expired) is taken by the
// account's next send, or by a send that names it. A batch that still has to delegate the account
// takes the nonce after its own too (its authorization's), so it takes no hole (`holes`) and its
// nonce is not counted: named at a hole, it is refused with a 400 naming `parameters.nonce`, and
// the hole stays the counter's to give. Before, such a batch forgot the hole, and when the node
// refused it, its nonce was neither filled (not counted) nor a hole any more: every later send of
// the account waited in the node's queue behind it. Found by the audit of a70eccd5.

import { Transaction } from 'micro-eth-signer'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillIdOf, SEND_EXPIRES_AFTER_MS } from '../../src/sending/evmSender.ts'
import { nonceIdOf } from '../../src/sending/sendingState.ts'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { createHarness, fakeClock, type Harness, resultOf } from '../../src/testing/harness.ts'
import { type Chain, endUser, passUntil, startChain } from './sendSupport.ts'

const CAIP2 = 'eip155:31337'
const DEAD = '0x000000000000000000000000000000000000dEaD'
const GWEI = 10n ** 9n
const PRICE = { gasLimit: '21000', maxFeePerGas: String(2n * GWEI), maxPriorityFeePerGas: String(GWEI) }
let chain: Chain

beforeAll(async () => {
  chain = await startChain()
}, 60_000)

afterAll(async () => {
  await chain?.node.close()
})

const transferred = (raw: string) => (Transaction.fromHex(raw).raw as { value: bigint }).value

async function waitForStatus(h: Harness, id: string, status: string) {
  const until = Date.now() + 10_000
  for (;;) {
    const row = await h.service.store.get('sendTransactions', id)
    if (row?.status === status) return row
    if (Date.now() > until) throw new Error(`send ${id} still ${row?.status}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe('a batch that delegates the account, naming a hole of its counter', { timeout: 120_000 }, () => {
  it('is refused with a 400 naming parameters.nonce, the hole kept: the account’s next send takes it and is mined', async () => {
    let release = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    // The node refuses any batch (as it would one of an account that cannot pay for it).
    const fetchFn: typeof fetch = async (input, init) => {
      const body = JSON.parse(String(init?.body)) as { id: number; method: string; params: string[] }
      if (body.method === 'eth_sendRawTransaction') {
        const raw = body.params[0]!
        if (transferred(raw) === 8n && !raw.startsWith('0x04')) await gate
        if (raw.startsWith('0x04')) {
          const error = { code: -32000, message: 'insufficient funds for gas * price + value' }
          return new Response(JSON.stringify({ jsonrpc: '2.0', id: body.id, error }), {
            headers: { 'content-type': 'application/json' },
          })
        }
      }
      return fetch(input, init)
    }
    const h = await createHarness({
      clock: fakeClock(Date.now()),
      rpc: { [CAIP2]: chain.url },
      sending: { worker: false, pollIntervalMs: 250 },
      sponsorship: { delegates: { [CAIP2]: chain.delegate }, caps: {} },
      fetch: fetchFn,
    })
    const user = await endUser(h)
    // Submitted at the service's clock as it is (`endUser`'s `send` sets it to real time, hours
    // back once the test moved it past the expiry).
    const submit = (parameters: Record<string, unknown>) =>
      h.submit('eth_send_transaction', { from: user.from, caip2: CAIP2, ...PRICE, ...parameters }, user.as)
    const send = async (parameters: Record<string, unknown>) =>
      resultOf('eth_send_transaction', await submit(parameters)).sendTransactionStatusId as string
    // As in userFillsExpire: an account holding nothing, two sends, the first refused after the
    // second took the next nonce; its fill, refused, expires and leaves its nonce a hole.
    const first = await send({ calls: [{ to: DEAD, value: '7' }] })
    await send({ calls: [{ to: DEAD, value: '8' }] })
    const firstRow = (await h.service.store.get('sendTransactions', first))!
    const worker = startSendWorker(h.service.runtime, { loop: false })
    try {
      const pass = worker.pass()
      await waitForStatus(h, first, 'FAILED')
      release()
      await pass
      for (let i = 0; i < 5; i++) {
        h.clock.advance(31_000)
        await worker.pass()
      }
      h.clock.advance(SEND_EXPIRES_AFTER_MS)
      await worker.pass()
      expect((await h.service.store.get('sendTransactions', fillIdOf(first)))!.status).toBe('FAILED')
      const hole = firstRow.nonce!
      const counterId = nonceIdOf(CAIP2, user.from)
      expect((await h.service.store.get('nonces', counterId))!.holes).toEqual([hole])

      // Funded now. The account's user sends a batch (the account not yet delegated) naming that
      // hole: refused before anything is signed, the hole kept.
      await chain.fund(user.from, 10n ** 17n)
      const sendsBefore = (await h.service.store.all('sendTransactions')).length
      const batch = {
        nonce: hole,
        gasLimit: '300000',
        calls: [
          { to: DEAD, value: '1' },
          { to: DEAD, value: '2' },
        ],
      }
      const refused = await submit(batch)
      expect({ status: refused.status, field: refused.body.details?.field }).toEqual({
        status: 400,
        field: 'parameters.nonce',
      })
      expect((await h.service.store.all('sendTransactions')).length).toBe(sendsBefore)
      expect((await h.service.store.get('nonces', counterId))!.holes).toEqual([hole])
      // Without the nonce, the batch takes the counter's next (and the one after): no hole.
      const unnamed = await send({ ...batch, nonce: undefined })
      expect((await h.service.store.get('sendTransactions', unnamed))!.nonce).not.toBe(hole)
      expect((await h.service.store.get('nonces', counterId))!.holes).toEqual([hole])

      // The account's next send takes the hole and is mined.
      const next = await send({ calls: [{ to: DEAD, value: '9' }] })
      expect((await h.service.store.get('sendTransactions', next))!.nonce).toBe(hole)
      const status = async () => (await h.service.store.get('sendTransactions', next))!.status
      await passUntil(h, worker, async () => !['PENDING', 'BROADCASTED'].includes(await status()))
      expect((await h.service.store.get('sendTransactions', next))!.status).toBe('INCLUDED')
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })
})
