// A send is claimed for a lease of 3 × rpcTimeoutMs (30 s here); an instance whose lease runs out
// while it waits (a slow node answer, a paused process, a slow database) may find that another
// instance claimed the send meanwhile and recorded it broadcast, replaced, or mined. Its writes
// under the lease it lost once went through with no guard: its BROADCASTED made a mined send open
// again (and the next look settled its fee a second time: the limit then counted 0 for a mined
// transfer), its refusal ended FAILED a send the other instance saw mined, and gave back the
// reservation of a send the other instance broadcast and the node mined. Here instances A and B
// are two workers of one service (one store, one clock); staleLeaseAcrossInstances.test.ts runs
// the first two over two service instances on PostgreSQL. From the audit of the send worker's lease.
// A stale instance's node call is not undone with its writes: a version it hands a node after the
// instance that took the send over got that version refused (and went back from it) may be mined,
// and the send asks its receipt still (`refusedHashes`), from the second audit of the lease.
import { Transaction } from 'micro-eth-signer'
import { describe, expect, it } from 'vitest'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import {
  byHandService,
  chainForFile,
  holdingBroadcasts,
  paidFor,
  receiptsLagging,
  refusingOnce,
  transferUnderLimit,
} from './byHand.ts'
import { receiptOf } from './sendSupport.ts'

const chain = chainForFile()

/** Past a lease of 3 × rpcTimeoutMs (the default 10 s). */
const PAST_THE_LEASE_MS = 31_000

describe('a write under a lease that ran out', { timeout: 120_000 }, () => {
  it('a late BROADCASTED leaves a mined send INCLUDED, its fee settled once', async () => {
    const node = holdingBroadcasts()
    const h = await byHandService(chain, node.fetch)
    const a = startSendWorker(h.service.runtime, { loop: false })
    const b = startSendWorker(h.service.runtime, { loop: false })
    try {
      const { row, used } = await transferUnderLimit(h, chain)
      const hash = (await row()).txHash
      const reserved = BigInt((await row()).reservedFee!)
      let usedWhenIncluded = -1n
      node.hold.next = {
        when: 'after',
        during: async () => {
          // The node took A's broadcast and mined it; A's answer comes after its lease.
          await receiptOf(chain, hash)
          h.clock.advance(PAST_THE_LEASE_MS)
          for (let i = 0; i < 20 && (await row()).status !== 'INCLUDED'; i++) {
            await b.pass()
            h.clock.advance(300)
          }
          expect((await row()).status, 'B saw it mined').toBe('INCLUDED')
          usedWhenIncluded = await used()
        },
      }
      await a.pass()
      expect(node.hold.next, 'A broadcast under its claim').toBeUndefined()
      expect((await row()).status, "A's late write leaves B's INCLUDED as it was").toBe('INCLUDED')
      const paid = paidFor((await receiptOf(chain, hash))!)
      expect(reserved > paid).toBe(true)
      expect(usedWhenIncluded, 'B settled the fee once: the value and the fee paid').toBe(5n + paid)
      for (let i = 0; i < 5; i++) {
        h.clock.advance(1_000)
        await a.pass()
        await b.pass()
      }
      const end = await row()
      expect(end.status).toBe('INCLUDED')
      expect(Transaction.fromHex(end.signedTransaction).hash).toBe(hash)
      expect(await used(), 'the mined send counts what it cost, once').toBe(5n + paid)
    } finally {
      await a.stop()
      await b.stop()
      await h.service.close()
    }
  })

  it('a late "nonce too low" does not end FAILED a send B replaced and saw mined', async () => {
    const node = holdingBroadcasts()
    const h = await byHandService(chain, node.fetch)
    const a = startSendWorker(h.service.runtime, { loop: false })
    const b = startSendWorker(h.service.runtime, { loop: false })
    await chain.rpc('evm_setAutomine', [false])
    try {
      const { row } = await transferUnderLimit(h, chain)
      const v1 = (await row()).txHash
      let v2 = ''
      node.hold.next = {
        when: 'before',
        during: async () => {
          // A's v1 on its way to the node, past A's lease.
          h.clock.advance(PAST_THE_LEASE_MS)
          await b.pass() // B: claims it, broadcasts v1 (held in the pool: no block is mined)
          expect((await row()).status).toBe('BROADCASTED')
          h.clock.advance(61_000) // past replaceAfterMs
          await b.pass() // B: replaced (v2, PENDING)
          await b.pass() // B: v2 broadcast
          v2 = (await row()).txHash
          expect(v2).not.toBe(v1)
          await chain.rpc('evm_mine', [])
          expect((await receiptOf(chain, v2))?.status, 'v2 mined').toBe('0x1')
          for (let i = 0; i < 10 && (await row()).status !== 'INCLUDED'; i++) {
            h.clock.advance(300)
            await b.pass()
          }
          expect((await row()).status, 'B saw v2 mined').toBe('INCLUDED')
        },
      }
      // A: its v1 reaches the node last, "nonce too low"; its row knows no v2, whose receipt it
      // does not ask for, and no broadcast of its own.
      await a.pass()
      expect(node.hold.next, 'A broadcast under its claim').toBeUndefined()
      const end = await row()
      expect(end.txHash).toBe(v2)
      expect(end.status, `the send is mined (v2); it reads ${end.error?.message}`).toBe('INCLUDED')
    } finally {
      await chain.rpc('evm_setAutomine', [true])
      await a.stop()
      await b.stop()
      await h.service.close()
    }
  })

  it('a late refusal gives back nothing of a send B broadcast and the node mined', async () => {
    let lagging = false
    const node = holdingBroadcasts(receiptsLagging(() => lagging))
    const h = await byHandService(chain, node.fetch)
    const a = startSendWorker(h.service.runtime, { loop: false })
    const b = startSendWorker(h.service.runtime, { loop: false })
    // B's answer on its way until released (in the end whatever happens, so that B's pass ends).
    let releaseB = () => {}
    const bAnswered = new Promise<void>((resolve) => {
      releaseB = resolve
    })
    try {
      const { row, used } = await transferUnderLimit(h, chain)
      const hash = (await row()).txHash
      let bPass: Promise<void> | undefined
      node.hold.next = {
        when: 'before',
        during: async () => {
          // A, paused past its lease before its broadcast goes out (attempts 0 as it read the send).
          h.clock.advance(PAST_THE_LEASE_MS)
          let bSent = () => {}
          const sent = new Promise<void>((resolve) => {
            bSent = resolve
          })
          node.hold.next = {
            when: 'after',
            during: async () => {
              bSent()
              await bAnswered // B's answer on its way
            },
          }
          bPass = b.pass() // B claims it (attempts 1) and broadcasts it: the node takes and mines it
          await sent
          expect((await receiptOf(chain, hash))?.status, 'mined').toBe('0x1')
          lagging = true // A's look for the receipt finds none yet
        },
      }
      await a.pass()
      const bClaimed = await row()
      // Soft: the money below is what this proves; the status is how.
      expect.soft(bClaimed.status, "A's late refusal leaves B's claim as it was").toBe('PENDING')
      expect.soft(bClaimed.attempts).toBe(1)
      lagging = false
      releaseB()
      await bPass
      for (let i = 0; i < 10; i++) {
        h.clock.advance(1_000)
        await a.pass()
        await b.pass()
      }
      const paid = paidFor((await receiptOf(chain, hash))!)
      expect((await row()).status, 'the transfer is mined').toBe('INCLUDED')
      expect(await used(), 'the mined transfer counts its value and fee').toBe(5n + paid)
    } finally {
      releaseB()
      await a.stop()
      await b.stop()
      await h.service.close()
    }
  })

  it('a node unreachable after the lease ran out leaves the next claim as it was', async () => {
    const node = holdingBroadcasts()
    const h = await byHandService(chain, node.fetch)
    const a = startSendWorker(h.service.runtime, { loop: false })
    const b = startSendWorker(h.service.runtime, { loop: false })
    // B's answer on its way until released (in the end whatever happens, so that B's pass ends).
    let releaseB = () => {}
    const bAnswered = new Promise<void>((resolve) => {
      releaseB = resolve
    })
    try {
      const { row } = await transferUnderLimit(h, chain)
      let bPass: Promise<void> | undefined
      let bClaimed: Awaited<ReturnType<typeof row>> | undefined
      node.hold.next = {
        when: 'before',
        during: async () => {
          h.clock.advance(PAST_THE_LEASE_MS)
          let bSent = () => {}
          const sent = new Promise<void>((resolve) => {
            bSent = resolve
          })
          node.hold.next = {
            when: 'after',
            during: async () => {
              bClaimed = await row()
              bSent()
              await bAnswered
            },
          }
          bPass = b.pass() // B claims it and broadcasts it, its answer on its way
          await sent
          // A's request never reaches the node: a connection that failed.
          throw new TypeError('fetch failed')
        },
      }
      await a.pass()
      expect(bClaimed?.attempts, "B's claim counts A's as an attempt whose answer was lost").toBe(1)
      // B's claim (its lease, the attempt it counts) stands: A's backoff is not written over it,
      // which would end B's lease while B waits on the node's answer.
      expect(await row()).toEqual(bClaimed)
      releaseB()
      await bPass
      expect((await row()).status).toBe('BROADCASTED')
    } finally {
      releaseB()
      await a.stop()
      await b.stop()
      await h.service.close()
    }
  })

  it('a mined send made open again (by an instance of an older version) settles its fee once', async () => {
    const h = await byHandService(chain, fetch)
    const worker = startSendWorker(h.service.runtime, { loop: false })
    try {
      const { row, used } = await transferUnderLimit(h, chain)
      await worker.pass()
      for (let i = 0; i < 10 && (await row()).status !== 'INCLUDED'; i++) {
        h.clock.advance(300)
        await worker.pass()
      }
      const mined = await row()
      expect(mined.status).toBe('INCLUDED')
      const paid = paidFor((await receiptOf(chain, mined.txHash))!)
      expect(await used()).toBe(5n + paid)
      // What an older instance's late BROADCASTED wrote, with no guard: the send open again.
      await h.service.store.transaction((tx) =>
        tx.put('sendTransactions', { ...mined, status: 'BROADCASTED', notBefore: h.clock.now() }),
      )
      for (let i = 0; i < 10 && (await row()).status !== 'INCLUDED'; i++) {
        h.clock.advance(1_000)
        await worker.pass()
      }
      expect((await row()).status, 'seen mined again').toBe('INCLUDED')
      expect(await used(), 'the mined send counts what it cost, once').toBe(5n + paid)
    } finally {
      await worker.stop()
      await h.service.close()
    }
  })
  it("a version B's refusal dropped, A's late broadcast of it mined, ends the send INCLUDED", async () => {
    // An unsponsored send's v1 waits, replaced by v2 (PENDING). A claims v2 and hands it to the
    // node; its call is slow, its lease runs out. B claims v2, the node refuses it ("insufficient
    // funds": the raised fee past what the sender holds then), and B goes back to v1. A's v2 then
    // reaches the node, replaces v1 in its pool and is mined: the send once tracked only v1, and
    // ended FAILED "no version of this send was mined" ten minutes later; an app retrying it paid
    // twice.
    const refusal = refusingOnce('insufficient funds for gas * price + value')
    const refusing = refusal.fetch
    const node = holdingBroadcasts(refusing)
    const h = await byHandService(chain, node.fetch)
    const a = startSendWorker(h.service.runtime, { loop: false })
    const b = startSendWorker(h.service.runtime, { loop: false })
    await chain.rpc('evm_setAutomine', [false])
    try {
      const { row, used } = await transferUnderLimit(h, chain)
      const v1 = (await row()).txHash
      await b.pass() // v1 broadcast, held in the pool (no block mined)
      expect((await row()).status).toBe('BROADCASTED')
      h.clock.advance(61_000) // past replaceAfterMs
      await b.pass() // replaced: v2, PENDING
      const v2row = await row()
      expect(v2row.status).toBe('PENDING')
      const v2 = v2row.txHash
      expect(v2).not.toBe(v1)
      let refusedAfterB: string[] | undefined
      node.hold.next = {
        when: 'before',
        during: async () => {
          // A's v2 on its way to the node (a paused process, a slow network), past A's lease.
          h.clock.advance(PAST_THE_LEASE_MS)
          refusal.refuse(v2row.signedTransaction)
          await b.pass() // B claims it; v2 refused: back to v1
          const back = await row()
          expect(back.txHash, 'B went back to v1').toBe(v1)
          expect([back.txHash, ...(back.priorHashes ?? [])]).not.toContain(v2)
          refusedAfterB = back.refusedHashes
        },
      }
      await a.pass() // A's v2 reaches the node now, and replaces v1 in its pool
      expect(node.hold.next, 'A broadcast under its claim').toBeUndefined()
      await chain.rpc('evm_mine', [])
      const receipt = await receiptOf(chain, v2)
      expect(receipt?.status, 'v2 (A’s late broadcast) is mined').toBe('0x1')
      // The send's next looks, through the confirmation of a nonce taken (10 minutes).
      for (let i = 0; i < 30 && ['PENDING', 'BROADCASTED'].includes((await row()).status); i++) {
        h.clock.advance(60_000)
        await a.pass()
        await b.pass()
      }
      const end = await row()
      expect(end.status, `v2 is mined; the send reads ${end.status}: ${end.error?.message}`).toBe('INCLUDED')
      expect(end.txHash).toBe(v2)
      expect(refusedAfterB, 'B kept asking about v2').toEqual([v2])
      expect(await used(), 'the limit keeps what v2 paid').toBe(5n + paidFor(receipt!))
    } finally {
      await chain.rpc('evm_setAutomine', [true])
      await a.stop()
      await b.stop()
      await h.service.close()
    }
  })
})
