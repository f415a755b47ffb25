// The sending wing (issue 35): one sender per chain family behind `ChainSender`, picked by the
// CAIP-2 namespace. A toy chain family, added through `sendingWing({ senders })`, goes the whole way
// a real one does: submitted, committed, broadcast and tracked by the send worker, and read back
// with the published `get_send_transaction_status`; without its sender it is refused at submit.
import { describe, expect, it } from 'vitest'
import { createService } from '../assembly/createService.ts'
import { ApiError } from '../kernel/base/errors.ts'
import type { EventSink } from '../kernel/base/events.ts'
import type { Reader } from '../kernel/Reader.ts'
import type { ActivityContext, ActivityHandler, PrepareContext } from '../kernel/registry.ts'
import type { SendTransactionRow } from '../kernel/store/model.ts'
import { createMetrics } from '../observability/metrics.ts'
import { createHarness, type Harness, resultOf } from '../testing/harness.ts'
import type { ChainSender } from './ChainSender.ts'
import { recordSend } from './ethSend.ts'
import { backlogOf, STALLED_SECONDS, watchSendBacklog } from './sendBacklog.ts'
import { rpcFor } from './sendingState.ts'
import { sendingWing } from './sendingWing.ts'
import { startSendWorker } from './sendWorker.ts'

const TOY = 'toy:1'
const TOY_NODE = 'http://toy-node.test/'

/**
 * A toy chain's node behind `fetch`: `toy_submit` takes a payload and `toy_landed` says whether it
 * has landed, which it does on the second look. It records every call.
 */
function toyNode() {
  const calls: { method: string; params: unknown[] }[] = []
  const looks = new Map<string, number>()
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const { id, method, params } = JSON.parse(String(init?.body)) as {
      id: number
      method: string
      params: unknown[]
    }
    calls.push({ method, params })
    if (String(input) !== TOY_NODE || !method.startsWith('toy_'))
      return Response.json({ jsonrpc: '2.0', id, error: { code: -32601, message: `no ${method} here` } })
    const hash = String(params[0])
    const seen = (looks.get(hash) ?? 0) + 1
    if (method === 'toy_landed') looks.set(hash, seen)
    return Response.json({ jsonrpc: '2.0', id, result: method === 'toy_submit' ? hash : seen >= 2 })
  }) as typeof globalThis.fetch
  return { calls, fetch }
}

/** The toy family's sender: broadcast with `toy_submit`, INCLUDED once `toy_landed` says so. */
const toySender: ChainSender = {
  namespace: 'toy',
  async broadcast(ctx, row) {
    await ctx.rpc('toy_submit', [row.txHash, row.signedTransaction])
    const now = ctx.runtime.now()
    await ctx.update(row, {
      status: 'BROADCASTED',
      attempts: row.attempts + 1,
      broadcastAt: now,
      notBefore: now,
    })
  },
  async track(ctx, row) {
    if (!(await ctx.rpc('toy_landed', [row.txHash]))) {
      await ctx.update(row, { notBefore: ctx.runtime.now() })
      return
    }
    if (
      await ctx.update(row, { status: 'INCLUDED', notBefore: Number.MAX_SAFE_INTEGER }, { whileOpen: true })
    )
      ctx.final(row, 'INCLUDED')
  },
}

/**
 * A toy send activity in place of `eth_send_transaction`: it checks the chain has a sender and a
 * node (`rpcFor`, as the built-in send activities do), then records the payload as the send.
 */
interface ToySend {
  caip2: string
  payload: string
}
const toySend = {
  parse: (r: Reader): ToySend => ({
    caip2: r.string('caip2', { max: 40 }),
    payload: r.string('payload', { max: 100 }),
  }),
  prepare: async (ctx: PrepareContext, p: ToySend) => {
    rpcFor(ctx.runtime, p.caip2)
  },
  run: async (ctx: ActivityContext, p: ToySend) => {
    const id = ctx.newId()
    await recordSend(ctx, {
      id,
      organizationId: ctx.organization.id,
      activityId: ctx.activityId,
      caip2: p.caip2,
      sender: 'toy-sender',
      account: 'toy-account',
      sponsored: false,
      signedTransaction: p.payload,
      txHash: `toy-${id}`,
    })
    return { sendTransactionStatusId: id }
  },
} as unknown as ActivityHandler<'eth_send_transaction'>

async function waitForFinal(h: Harness, sendTransactionStatusId: string) {
  for (let i = 0; i < 200; i++) {
    const reply = await h.query('get_send_transaction_status', { sendTransactionStatusId })
    if (reply.status !== 200 || !['PENDING', 'BROADCASTED'].includes(reply.body.txStatus)) return reply
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error('the send did not reach a final status')
}

describe('sendingWing', () => {
  it('sends on a chain family added with senders: submitted, broadcast and tracked by the worker, read back with get_send_transaction_status', async () => {
    const node = toyNode()
    const h = await createHarness({
      fetch: node.fetch,
      plugins: [
        sendingWing({ rpc: { [TOY]: TOY_NODE }, sending: { pollIntervalMs: 10 }, senders: [toySender] }),
      ],
      activities: { eth_send_transaction: toySend },
    })
    try {
      const submitted = await h.submit('eth_send_transaction', { caip2: TOY, payload: 'hello toy' })
      const { sendTransactionStatusId } = resultOf('eth_send_transaction', submitted)
      const final = await waitForFinal(h, sendTransactionStatusId)
      expect(final).toEqual({ status: 200, body: { txStatus: 'INCLUDED' } })
      // Through the toy sender only: never an EVM or Solana method.
      expect(node.calls[0]).toEqual({
        method: 'toy_submit',
        params: [`toy-${sendTransactionStatusId}`, 'hello toy'],
      })
      expect(node.calls.map((call) => call.method)).toEqual([
        'toy_submit',
        ...node.calls.slice(1).map(() => 'toy_landed'),
      ])
    } finally {
      await h.service.close()
    }
    // Closed: the worker is stopped and calls the node no more.
    const after = node.calls.length
    await new Promise((resolve) => setTimeout(resolve, 60))
    expect(node.calls.length).toBe(after)
  })

  it('shows a send no instance broadcasts: open on /readyz and in the metrics, a warning once it has waited two minutes, cleared once a worker broadcasts it', async () => {
    const node = toyNode()
    const metrics = createMetrics({ process: false })
    const seen: string[] = []
    const stalls: unknown[] = []
    const events: EventSink = {
      emit(name, data) {
        if (name.startsWith('send.')) seen.push(name)
        if (name === 'send.stalled') stalls.push(data)
        metrics.emit(name, data)
      },
    }
    const h = await createHarness({
      fetch: node.fetch,
      events,
      plugins: [sendingWing({ rpc: { [TOY]: TOY_NODE }, sending: { worker: false }, senders: [toySender] })],
      activities: { eth_send_transaction: toySend },
    })
    // Looks only when asked (`refresh`), apart from its first.
    const watch = watchSendBacklog(h.service.runtime, { intervalMs: 3_600_000 })
    const gauge = async (name: string, status: string) =>
      new RegExp(`^${name}\\{chain="toy",status="${status}"\\} (\\d+)$`, 'm').exec(
        await metrics.render(),
      )?.[1]
    try {
      const submitted = await h.submit('eth_send_transaction', { caip2: TOY, payload: 'nobody sends me' })
      const { sendTransactionStatusId } = resultOf('eth_send_transaction', submitted)
      h.clock.advance(90_000)
      await watch.refresh()
      const { sends } = await h.service.readiness()
      expect(sends).toEqual({
        worker: false,
        checkedAt: h.clock.now(),
        open: expect.arrayContaining([
          { chain: 'toy', status: 'PENDING', count: 1, oldestSeconds: 90 },
          { chain: 'toy', status: 'BROADCASTED', count: 0, oldestSeconds: 0 },
          { chain: 'eip155', status: 'PENDING', count: 0, oldestSeconds: 0 },
        ]),
      })
      expect(await gauge('latchkey_sends_open', 'PENDING')).toBe('1')
      expect(await gauge('latchkey_sends_oldest_open_seconds', 'PENDING')).toBe('90')
      expect(seen).not.toContain('send.stalled')

      // A second send, 90 s after the first.
      await h.submit('eth_send_transaction', { caip2: TOY, payload: 'nor me' })

      // Two minutes: one warning, not one a look, counting only the send that has waited that long.
      h.clock.advance((STALLED_SECONDS - 90) * 1000)
      await watch.refresh()
      await watch.refresh()
      expect(stalls).toEqual([
        { chains: ['toy'], count: 1, oldestSeconds: STALLED_SECONDS, workerHere: false },
      ])
      expect(await gauge('latchkey_sends_open', 'PENDING')).toBe('2')
      expect(node.calls).toEqual([])

      // A worker (another instance's, in production) takes it: broadcast, then mined on its second look.
      const worker = startSendWorker(h.service.runtime, { loop: false })
      try {
        await worker.pass()
        await worker.pass()
      } finally {
        await worker.stop()
      }
      expect(await h.query('get_send_transaction_status', { sendTransactionStatusId })).toEqual({
        status: 200,
        body: { txStatus: 'INCLUDED' },
      })
      await watch.refresh()
      expect(seen.filter((name) => name === 'send.unstalled')).toHaveLength(1)
      expect(await gauge('latchkey_sends_open', 'PENDING')).toBe('0')
      expect(await gauge('latchkey_sends_oldest_open_seconds', 'PENDING')).toBe('0')
      const text = await metrics.render()
      expect(text).toContain('latchkey_sends_final_total{chain="toy",status="INCLUDED"} 2')
      // Committed at 0 s and 90 s, both mined at 120 s of the fake clock.
      expect(text).toContain('latchkey_send_final_seconds_bucket{le="15",chain="toy",status="INCLUDED"} 0')
      expect(text).toContain('latchkey_send_final_seconds_bucket{le="30",chain="toy",status="INCLUDED"} 1')
      expect(text).toContain('latchkey_send_final_seconds_bucket{le="60",chain="toy",status="INCLUDED"} 1')
      expect(text).toContain('latchkey_send_final_seconds_bucket{le="120",chain="toy",status="INCLUDED"} 2')
    } finally {
      watch.stop()
      await h.service.close()
    }
  })

  it("counts a send of a family the service no longer sends on as chain 'other', never the row's own namespace", async () => {
    const service = await createService({ rpc: { [TOY]: TOY_NODE }, sending: { worker: false } })
    try {
      const row = (caip2: string, status: SendTransactionRow['status'], createdAt: number) =>
        ({ caip2, status, createdAt }) as SendTransactionRow
      const open = backlogOf(
        service.runtime,
        [
          row('toy:1', 'PENDING', 1_000),
          row('toy:2', 'PENDING', 5_000),
          row('eip155:1', 'BROADCASTED', 9_000),
          row('eip155:1', 'INCLUDED', 0),
        ],
        10_000,
      )
      expect(open).toEqual([
        { chain: 'eip155', status: 'PENDING', count: 0, oldestSeconds: 0 },
        { chain: 'eip155', status: 'BROADCASTED', count: 1, oldestSeconds: 1 },
        { chain: 'solana', status: 'PENDING', count: 0, oldestSeconds: 0 },
        { chain: 'solana', status: 'BROADCASTED', count: 0, oldestSeconds: 0 },
        { chain: 'other', status: 'PENDING', count: 2, oldestSeconds: 9 },
      ])
    } finally {
      await service.close()
    }
  })

  it('refuses a chain of a family it has no sender for at submit, naming the field, even with a node configured for it', async () => {
    const node = toyNode()
    const h = await createHarness({
      fetch: node.fetch,
      rpc: { [TOY]: TOY_NODE },
      activities: { eth_send_transaction: toySend },
    })
    try {
      const refused = await h.submit('eth_send_transaction', { caip2: TOY, payload: 'hello toy' })
      expect(refused).toMatchObject({
        status: 400,
        body: {
          message: expect.stringMatching(
            /toy:1 is not on a chain family the service sends on \(eip155, solana\)/,
          ),
          details: { errorCode: 'FIELD_INVALID', field: 'parameters.caip2' },
        },
      })
      expect(await h.service.store.all('sendTransactions')).toEqual([])
      expect(node.calls).toEqual([])
    } finally {
      await h.service.close()
    }
  })

  it('refuses a sender whose namespace is not a CAIP-2 namespace, and options given both to createService and to the wing', async () => {
    expect(() => sendingWing({ senders: [{ ...toySender, namespace: 'Toy:1' }] })).toThrow(
      /namespace "Toy:1" is not a CAIP-2 namespace/,
    )
    await expect(
      createService({ rpc: { [TOY]: TOY_NODE }, plugins: [sendingWing({ senders: [toySender] })] }),
    ).rejects.toThrow(/rpc: give it to the sendingWing\(\.\.\.\) passed in plugins, not to createService/)
  })

  it('keeps its options in its own state: the runtime options know nothing of rpc, sending or sponsorship', async () => {
    const service = await createService({ rpc: { [TOY]: TOY_NODE }, sending: { worker: false } })
    try {
      for (const name of ['rpc', 'sending', 'sponsorship'])
        expect(service.runtime.options).not.toHaveProperty(name)
      expect(() => rpcFor(service.runtime, 'eip155:1')).toThrow(ApiError)
      expect(() => rpcFor(service.runtime, 'eip155:1')).toThrow(/no JSON-RPC node is configured for eip155:1/)
    } finally {
      await service.close()
    }
  })
})
