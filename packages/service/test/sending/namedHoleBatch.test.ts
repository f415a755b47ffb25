// A hole of an account's counter (here: the nonce of a user's fill that expired) is taken by the
// account's next send, or by a send that names it. A batch that still has to delegate the account
// takes the nonce after its own too (its authorization's), so it takes no hole (`holes`) and its
// nonce is not counted: named at a hole, it is refused with a 400 naming `parameters.nonce`, and
// the hole stays the counter's to give. Before, such a batch forgot the hole, and when the node
// refused it, its nonce was neither filled (not counted) nor a hole any more: every later send of
// the account waited in the node's queue behind it. Found by the audit of a70eccd5.

import { describe, expect, it } from 'vitest'
import { fillIdOf, SEND_EXPIRES_AFTER_MS } from '../../src/sending/evmSender.ts'
import { nonceIdOf } from '../../src/sending/sendingState.ts'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { resultOf } from '../../src/testing/harness.ts'
import {
  byHandService,
  CAIP2,
  chainForFile,
  countingFetch,
  DEAD,
  PRICE,
  passes,
  passHolding,
  transferred,
} from './byHand.ts'
import { endUser, passUntil } from './sendSupport.ts'

const chain = chainForFile()

describe('a batch that delegates the account, naming a hole of its counter', { timeout: 120_000 }, () => {
  it('is refused with a 400 naming parameters.nonce, the hole kept: the account’s next send takes it and is mined', async () => {
    // The node refuses any batch (as it would one of an account that cannot pay for it).
    const counting = countingFetch(
      (raw) => transferred(raw) === 8n && !raw.startsWith('0x04'),
      (raw) => raw.startsWith('0x04'),
    )
    const h = await byHandService(chain, counting.fetch, {
      sponsorship: { delegates: { [CAIP2]: chain.delegate }, caps: {} },
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
      await passHolding(h, worker, [first], counting.release)
      await passes(h, worker, 5, 31_000)
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
