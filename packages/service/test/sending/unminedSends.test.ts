// What one end user's sends that never mine can make the send worker do to the operator's node. An
// `eth_send_raw_transaction` of a transaction the node never mines (a nonce past its sender's next:
// the node keeps it queued) was recorded as a send of its own at every submission (the same signed
// bytes too), and every open send was asked about on every worker pass, for good: the node calls
// grew with what one user had submitted. Now the same transaction is one send, an organization holds
// a bounded number of open sends, a nonce far past the sender's next is refused, an unmined
// unsponsored send ends expired, and another tenant's send is broadcast between batches of looks.
// Node calls are counted, not timed; the worker is run by hand, one pass at a time.
import { addr, Transaction } from 'micro-eth-signer'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { SendTransactionRow } from '../../src/kernel/store/model.ts'
import { Transaction as StoreTransaction } from '../../src/kernel/store/Transaction.ts'
import { MAX_OPEN_SENDS } from '../../src/sending/ethSend.ts'
import { SEND_EXPIRES_AFTER_MS } from '../../src/sending/evmSender.ts'
import { MAX_NONCE_GAP } from '../../src/sending/sendingState.ts'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { createHarness, fakeClock, fillRows, type Harness } from '../../src/testing/harness.ts'
import { type Chain, endUser, startChain } from './sendSupport.ts'

const CAIP2 = 'eip155:31337'
let chain: Chain

beforeAll(async () => {
  chain = await startChain()
}, 60_000)

afterAll(async () => {
  await chain?.node.close()
})

/** A fetch in front of the node that counts each JSON-RPC method the service calls. */
function countingFetch() {
  const calls = new Map<string, number>()
  const fetchFn: typeof fetch = async (input, init) => {
    const body = JSON.parse(String(init?.body)) as { method: string }
    calls.set(body.method, (calls.get(body.method) ?? 0) + 1)
    return fetch(input, init)
  }
  const total = () => [...calls.values()].reduce((a, b) => a + b, 0)
  return { fetch: fetchFn, calls, total, reset: () => calls.clear() }
}

const service = (fetchFn: typeof fetch): Promise<Harness> =>
  createHarness({
    clock: fakeClock(Date.now()),
    rpc: { [CAIP2]: chain.url },
    sending: { worker: false, pollIntervalMs: 250 },
    fetch: fetchFn,
  })

/** A transfer from a fresh outside key (funded with a little ETH) at `nonce`: nonce > 0 is never mined. */
async function transferAt(nonce: bigint) {
  const key = addr.random()
  await chain.fund(key.address, 10n ** 16n)
  return Transaction.prepare({
    to: '0x000000000000000000000000000000000000dEaD',
    value: 1n,
    nonce,
    chainId: 31337n,
    maxFeePerGas: 2n * 10n ** 10n,
    maxPriorityFeePerGas: 10n ** 9n,
  })
    .signBy(key.privateKey)
    .toHex()
}

const sendRaw = (h: Harness, signedTransaction: string, as: { organizationId: string; as: unknown }) => {
  h.clock.advance(1)
  return h.submit('eth_send_raw_transaction', { signedTransaction, caip2: CAIP2 }, as as never)
}

const openSendsOf = async (h: Harness, organizationId?: string) =>
  (await h.service.store.all('sendTransactions')).filter(
    (row) =>
      (row.status === 'PENDING' || row.status === 'BROADCASTED') &&
      (organizationId === undefined || row.organizationId === organizationId),
  )

describe('sends the node never mines', { timeout: 60_000 }, () => {
  it('one signed transaction submitted 30 times (10 at once) is one send, asked about once a pass', async () => {
    const counting = countingFetch()
    const h = await service(counting.fetch)
    const user = await endUser(h)
    const signedTransaction = await transferAt(7n)
    const hash = Transaction.fromHex(signedTransaction).hash
    // Control: the first submission is accepted, answering the transaction's hash.
    const first = await sendRaw(h, signedTransaction, user.as)
    expect(first.status).toBe(200)
    const answers = [
      ...(await Promise.all(Array.from({ length: 10 }, () => sendRaw(h, signedTransaction, user.as)))),
    ]
    for (let i = 0; i < 19; i++) answers.push(await sendRaw(h, signedTransaction, user.as))
    // Each is answered as the first was (a resubmission is no error).
    expect(answers.map((reply) => reply.status)).toEqual(Array(29).fill(200))
    for (const reply of [first, ...answers]) expect(JSON.stringify(reply.body)).toContain(hash)
    const worker = startSendWorker(h.service.runtime, { loop: false })
    await worker.pass() // the broadcast
    const open = (await openSendsOf(h)).filter((row) => row.txHash === hash)
    counting.reset()
    h.clock.advance(1_000)
    await worker.pass() // one tracking pass
    const calls = Object.fromEntries(counting.calls)
    await worker.stop()
    await h.service.close()
    expect(open).toHaveLength(1)
    expect(open[0]!.status).toBe('BROADCASTED')
    // One look: the sender's mined count (below its nonce 7, so no receipt is asked).
    expect(calls).toEqual({ eth_getTransactionCount: 1 })
  })

  it(`an unsponsored send the node never mines ends FAILED (expired) ${SEND_EXPIRES_AFTER_MS / 3600_000} hours after its commit and costs no call after`, async () => {
    const counting = countingFetch()
    const h = await service(counting.fetch)
    const user = await endUser(h)
    const signedTransaction = await transferAt(3n)
    expect((await sendRaw(h, signedTransaction, user.as)).status).toBe(200)
    const worker = startSendWorker(h.service.runtime, { loop: false })
    await worker.pass()
    const [row] = await h.service.store.all('sendTransactions')
    expect(row!.status).toBe('BROADCASTED') // the node took it
    // Control: still followed just before it expires: asked about (its sender's mined count, below
    // its nonce: no receipt; its pending count, a replacement being due: a gap, none made), and
    // whether the node still holds it (given again if not).
    h.clock.set(row!.createdAt + SEND_EXPIRES_AFTER_MS - 1_000)
    counting.reset()
    await worker.pass()
    expect((await h.service.store.get('sendTransactions', row!.id))!.status).toBe('BROADCASTED')
    expect(Object.fromEntries(counting.calls)).toEqual({
      eth_getTransactionCount: 2,
      eth_getTransactionByHash: 1,
    })
    h.clock.advance(1_000)
    await worker.pass()
    const after = (await h.service.store.get('sendTransactions', row!.id))!
    expect(after.status).toBe('FAILED')
    expect(after.error?.message).toMatch(/^expired: not mined within 3 hours/)
    // A month later: no call about it.
    counting.reset()
    for (let day = 0; day < 30; day++) {
      h.clock.advance(24 * 3600_000)
      await worker.pass()
    }
    expect(counting.total()).toBe(0)
    expect((await h.service.store.get('sendTransactions', row!.id))!.status).toBe('FAILED')
    await worker.stop()
    await h.service.close()
  })

  it(`an end user holds at most ${MAX_OPEN_SENDS.subOrganization} open sends (10 raced at the cap); another user sends meanwhile; one more once some end`, async () => {
    const counting = countingFetch()
    const h = await service(counting.fetch)
    const user = await endUser(h)
    const other = await endUser(h)
    const max = MAX_OPEN_SENDS.subOrganization
    for (let i = 0; i < max - 4; i++)
      expect((await sendRaw(h, await transferAt(5n), user.as)).status).toBe(200)
    // 10 distinct sends at once with room for 4: exactly 4 pass.
    const raced = await Promise.all(
      await Promise.all(Array.from({ length: 10 }, () => transferAt(5n))).then((txs) =>
        txs.map((tx) => sendRaw(h, tx, user.as)),
      ),
    )
    expect(raced.filter((reply) => reply.status === 200)).toHaveLength(4)
    expect(await openSendsOf(h, user.organizationId)).toHaveLength(max)
    const refused = await sendRaw(h, await transferAt(5n), user.as)
    expect(refused).toMatchObject({
      status: 412,
      body: {
        message: expect.stringContaining(`at most ${max} (openSendsPerOrganization)`),
        details: {
          errorCode: 'RESOURCE_LIMIT_REACHED',
          field: 'organizationId',
          limit: 'openSendsPerOrganization',
          max,
        },
      },
    })
    for (const reply of raced.filter((reply) => reply.status !== 200)) expect(reply.status).toBe(412)
    // The cap is the organization's: another end user sends.
    expect((await sendRaw(h, await transferAt(0n), other.as)).status).toBe(200)
    // Once its sends are final (expired), the user sends again.
    const worker = startSendWorker(h.service.runtime, { loop: false })
    await worker.pass()
    h.clock.advance(SEND_EXPIRES_AFTER_MS)
    await worker.pass()
    await worker.stop()
    expect(await openSendsOf(h, user.organizationId)).toHaveLength(0)
    expect((await sendRaw(h, await transferAt(5n), user.as)).status).toBe(200)
    await h.service.close()
  })

  it("a send reads none of the service's other open sends: the cap counts its organization's, a resubmission finds its own", async () => {
    const h = await service(fetch)
    const user = await endUser(h)
    const other = await endUser(h)
    const signedTransaction = await transferAt(2n)
    // Another organization's 300 open sends, and the user's 100 final ones.
    const open = (i: number, id: string, organizationId: string, status: SendTransactionRow['status']) => ({
      id,
      organizationId,
      activityId: `activity-${i}`,
      caip2: CAIP2,
      sender: '0x0000000000000000000000000000000000000001',
      account: '0x0000000000000000000000000000000000000001',
      sponsored: false,
      signedTransaction: '0x02',
      txHash: `0x${i.toString(16).padStart(64, '0')}`,
      status,
      attempts: 0,
      notBefore: Number.MAX_SAFE_INTEGER,
      replacements: 0,
      createdAt: 0,
      updatedAt: 0,
    })
    await fillRows(h, 'sendTransactions', 300, (i, id) => open(i, id, other.organizationId, 'BROADCASTED'))
    await h.service.store.transaction(async (tx) => {
      for (let i = 0; i < 100; i++)
        await tx.put('sendTransactions', open(1000 + i, `done-${i}`, user.organizationId, 'INCLUDED'))
    })
    // The send rows each submission's transaction reads.
    const original = StoreTransaction.prototype.findBy
    let rowsRead = 0
    const spy = vi.spyOn(StoreTransaction.prototype, 'findBy').mockImplementation(async function (
      this: StoreTransaction,
      ...args: Parameters<StoreTransaction['findBy']>
    ) {
      const rows = await original.apply(this, args)
      if (args[0] === 'sendTransactions') rowsRead += rows.length
      return rows as never
    })
    try {
      expect((await sendRaw(h, signedTransaction, user.as)).status).toBe(200)
      expect(rowsRead).toBe(0)
      // Given again: the one open send of that transaction is read, and answered.
      const again = await sendRaw(h, signedTransaction, user.as)
      expect(again.status).toBe(200)
      expect(rowsRead).toBe(1)
    } finally {
      spy.mockRestore()
    }
    expect(await openSendsOf(h, user.organizationId)).toHaveLength(1)
    await h.service.close()
  })

  it('the same signed transaction given by another organization is a send of that organization (each follows its own)', async () => {
    const h = await service(fetch)
    const [a, b] = [await endUser(h), await endUser(h)]
    const signedTransaction = await transferAt(4n)
    for (const as of [a.as, b.as, a.as]) expect((await sendRaw(h, signedTransaction, as)).status).toBe(200)
    // One open send in each: the first's resubmission is the first's.
    expect((await openSendsOf(h, a.organizationId)).length).toBe(1)
    expect((await openSendsOf(h, b.organizationId)).length).toBe(1)
    await h.service.close()
  })

  it(`a raw transaction more than ${MAX_NONCE_GAP} nonces past its sender's next is refused, naming the field`, async () => {
    const h = await service(fetch)
    const user = await endUser(h)
    const far = await transferAt(MAX_NONCE_GAP + 1n)
    const refused = await sendRaw(h, far, user.as)
    expect(refused).toMatchObject({
      status: 400,
      body: {
        message: expect.stringContaining(`more than ${MAX_NONCE_GAP} past`),
        details: { errorCode: 'TRANSACTION_INVALID', field: 'parameters.signedTransaction' },
      },
    })
    expect(await openSendsOf(h)).toHaveLength(0)
    // Control: at the gap, accepted.
    expect((await sendRaw(h, await transferAt(MAX_NONCE_GAP), user.as)).status).toBe(200)
    await h.service.close()
  })

  it("another tenant's send is broadcast after at most one batch (16) of looks at one tenant's open sends", async () => {
    // The order of the node's calls, by whose transaction each is about (a look at a send asks its
    // sender's mined count).
    const log: string[] = []
    let gate: Promise<void> | undefined
    const attackerSenders = new Set<string>()
    let victimRaw = ''
    const fetchFn: typeof fetch = async (input, init) => {
      const body = JSON.parse(String(init?.body)) as { method: string; params: unknown[] }
      if (
        body.method === 'eth_getTransactionCount' &&
        attackerSenders.has(String(body.params[0]).toLowerCase())
      ) {
        log.push('attacker')
        await gate
      }
      if (body.method === 'eth_sendRawTransaction' && body.params[0] === victimRaw)
        log.push('victim-broadcast')
      return fetch(input, init)
    }
    const h = await service(fetchFn)
    const attacker = await endUser(h)
    const victim = await endUser(h)
    const N = MAX_OPEN_SENDS.subOrganization
    for (let i = 0; i < N; i++) {
      const stuck = await transferAt(9n)
      attackerSenders.add(Transaction.fromHex(stuck).sender.toLowerCase())
      expect((await sendRaw(h, stuck, attacker.as)).status).toBe(200)
    }
    const worker = startSendWorker(h.service.runtime, { loop: false })
    await worker.pass() // the attacker's sends are broadcast (BROADCASTED, looked at each pass)
    // A tracking pass starts; the victim's ordinary send is committed while it runs.
    let open!: () => void
    gate = new Promise<void>((resolve) => {
      open = resolve
    })
    h.clock.advance(1_000)
    log.length = 0
    const tracking = worker.pass()
    while (log.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    victimRaw = await transferAt(0n) // nonce 0: an ordinary send the node mines
    expect((await sendRaw(h, victimRaw, victim.as)).status).toBe(200)
    log.push('victim-committed')
    gate = undefined
    open()
    await tracking
    await worker.pass()
    await worker.stop()
    await h.service.close()
    const committed = log.indexOf('victim-committed')
    const broadcast = log.indexOf('victim-broadcast')
    expect(broadcast).toBeGreaterThan(committed) // control: it was broadcast, after its commit
    const waitedBehind = log.slice(committed, broadcast).filter((entry) => entry === 'attacker').length
    expect(waitedBehind).toBeLessThanOrEqual(16)
  })
})
