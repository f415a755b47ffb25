// staleLease.test.ts's first two cases over two service instances on one PostgreSQL database (each
// with its own worker, store connection and node client; the deployment's clock shared): instance
// A's broadcast is answered (or reaches the node) after A's lease ran out, B having taken the send
// over meanwhile. A's write after it holds only while its claim does: B's record stands. From the
// audit of the send worker's lease. The last case is staleLease.test.ts's: A's late v2, which B got
// refused and went back from, is mined and ends the send INCLUDED (the second audit of the lease).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../../../scripts/postgres.mjs'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { deploymentOn } from '../support/twoInstances.ts'
import { CAIP2, holdingBroadcasts, paidFor, refusingOnce, transferUnderLimit } from './byHand.ts'
import { type Chain, receiptOf, startChain } from './sendSupport.ts'

let chain: Chain
let cluster: PostgresCluster

beforeAll(async () => {
  ;[chain, cluster] = await Promise.all([startChain(), startPostgres()])
}, 600_000)

afterAll(async () => {
  await chain?.node.close()
  await cluster?.dispose()
}, 60_000)

/**
 * Instances A (its node calls through `fetchA`) and B (through `fetchB`) on a fresh database,
 * neither worker looping.
 */
async function instances(database: string, fetchA: typeof fetch, fetchB?: typeof fetch) {
  const deployment = deploymentOn(cluster, database, {
    rpc: { [CAIP2]: chain.url },
    sending: { worker: false, pollIntervalMs: 250 },
  })
  const a = await deployment.open({ fetch: fetchA })
  const b = await deployment.open(fetchB ? { fetch: fetchB } : undefined)
  const workerA = startSendWorker(a.service.runtime, { loop: false })
  const workerB = startSendWorker(b.service.runtime, { loop: false })
  return {
    a,
    b,
    workerA,
    workerB,
    close: async () => {
      await workerA.stop()
      await workerB.stop()
      await a.service.close()
      await b.service.close()
    },
  }
}

describe('a write under a lease that ran out, two instances on PostgreSQL', { timeout: 180_000 }, () => {
  it("A's late BROADCASTED leaves B's INCLUDED as it was, its fee settled once", async () => {
    const node = holdingBroadcasts()
    const { a, b, workerA, workerB, close } = await instances('lease_broadcasted', node.fetch)
    try {
      const { id, used } = await transferUnderLimit(a, chain)
      const row = async () => (await b.service.store.get('sendTransactions', id))!
      const hash = (await row()).txHash
      let usedWhenIncluded = -1n
      node.hold.next = {
        when: 'after',
        during: async () => {
          await receiptOf(chain, hash)
          a.clock.advance(31_000) // past A's lease (3 × rpcTimeoutMs)
          for (let i = 0; i < 20 && (await row()).status !== 'INCLUDED'; i++) {
            await workerB.pass()
            a.clock.advance(300)
          }
          expect((await row()).status, 'B saw it mined').toBe('INCLUDED')
          usedWhenIncluded = await used()
        },
      }
      await workerA.pass()
      expect(node.hold.next).toBeUndefined()
      expect((await row()).status).toBe('INCLUDED')
      const paid = paidFor((await receiptOf(chain, hash))!)
      expect(usedWhenIncluded).toBe(5n + paid)
      for (let i = 0; i < 5; i++) {
        a.clock.advance(1_000)
        await workerA.pass()
        await workerB.pass()
      }
      expect((await row()).status).toBe('INCLUDED')
      expect(await used(), 'the mined send counts what it cost, once').toBe(5n + paid)
    } finally {
      await close()
    }
  })

  it("A's late refusal does not end FAILED the send B replaced and saw mined", async () => {
    const node = holdingBroadcasts()
    const { a, b, workerA, workerB, close } = await instances('lease_refusal', node.fetch)
    await chain.rpc('evm_setAutomine', [false])
    try {
      const { id } = await transferUnderLimit(a, chain)
      const row = async () => (await b.service.store.get('sendTransactions', id))!
      const v1 = (await row()).txHash
      let v2 = ''
      node.hold.next = {
        when: 'before',
        during: async () => {
          a.clock.advance(31_000)
          await workerB.pass() // v1 broadcast by B, left in the pool
          a.clock.advance(61_000)
          await workerB.pass() // replaced: v2
          await workerB.pass() // v2 broadcast
          v2 = (await row()).txHash
          expect(v2).not.toBe(v1)
          await chain.rpc('evm_mine', [])
          expect((await receiptOf(chain, v2))?.status).toBe('0x1')
          for (let i = 0; i < 10 && (await row()).status !== 'INCLUDED'; i++) {
            a.clock.advance(300)
            await workerB.pass()
          }
          expect((await row()).status, 'B saw v2 mined').toBe('INCLUDED')
        },
      }
      await workerA.pass() // A's v1 reaches the node last: "nonce too low"
      expect(node.hold.next).toBeUndefined()
      const end = await row()
      expect(end.txHash).toBe(v2)
      expect(end.status, `v2 is mined; the send reads ${end.error?.message}`).toBe('INCLUDED')
    } finally {
      await chain.rpc('evm_setAutomine', [true])
      await close()
    }
  })
  it("A's late v2, which B got refused and went back from, is mined: the send ends INCLUDED", async () => {
    const refusal = refusingOnce('insufficient funds for gas * price + value')
    const refusing = refusal.fetch
    const node = holdingBroadcasts(refusing)
    const { a, b, workerA, workerB, close } = await instances('lease_dropped_version', node.fetch, refusing)
    await chain.rpc('evm_setAutomine', [false])
    try {
      const { id, used } = await transferUnderLimit(a, chain)
      const row = async () => (await b.service.store.get('sendTransactions', id))!
      const v1 = (await row()).txHash
      await workerB.pass() // v1 broadcast, left in the pool
      a.clock.advance(61_000)
      await workerB.pass() // replaced: v2, PENDING
      const v2row = await row()
      expect(v2row.status).toBe('PENDING')
      const v2 = v2row.txHash
      expect(v2).not.toBe(v1)
      let refusedAfterB: string[] | undefined
      node.hold.next = {
        when: 'before',
        during: async () => {
          a.clock.advance(31_000) // past A's lease
          refusal.refuse(v2row.signedTransaction)
          await workerB.pass() // B: v2 refused, back to v1
          const back = await row()
          expect(back.txHash).toBe(v1)
          expect([back.txHash, ...(back.priorHashes ?? [])]).not.toContain(v2)
          refusedAfterB = back.refusedHashes
        },
      }
      await workerA.pass() // A's v2 reaches the node now
      expect(node.hold.next).toBeUndefined()
      await chain.rpc('evm_mine', [])
      const receipt = await receiptOf(chain, v2)
      expect(receipt?.status, "A's v2 is mined").toBe('0x1')
      for (let i = 0; i < 30 && ['PENDING', 'BROADCASTED'].includes((await row()).status); i++) {
        a.clock.advance(60_000)
        await workerA.pass()
        await workerB.pass()
      }
      const end = await row()
      expect(end.status, `v2 is mined; the send reads ${end.status}: ${end.error?.message}`).toBe('INCLUDED')
      expect(end.txHash).toBe(v2)
      expect(refusedAfterB, 'B kept asking about v2').toEqual([v2])
      expect(await used(), 'the limit keeps what v2 paid').toBe(5n + paidFor(receipt!))
    } finally {
      await chain.rpc('evm_setAutomine', [true])
      await close()
    }
  })
})
