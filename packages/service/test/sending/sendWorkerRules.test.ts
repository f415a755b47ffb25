// The send worker (issue 35): it sends only on chain families it knows, never guessing EVM for an
// unknown namespace, and it reads the service's clock, so a test (or an operator's tooling) that
// freezes it freezes the worker's backoff and leases too.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { createHarness, ETHEREUM_ACCOUNT, fakeClock, type Harness } from '../../src/testing/harness.ts'

const BIP122 = 'bip122:000000000019d6689c085ae165831e93'
const CAIP2 = 'eip155:31337'

let node: Server
let url: string
const methods: string[] = []

/** A node that records every method and answers each as anvil would for an unknown transaction. */
beforeAll(async () => {
  node = createServer(async (request, response) => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const { id, method } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      id: number
      method: string
    }
    methods.push(method)
    response.setHeader('content-type', 'application/json')
    response.end(
      JSON.stringify(
        method === 'eth_sendRawTransaction'
          ? { jsonrpc: '2.0', id, result: `0x${'ab'.repeat(32)}` }
          : { jsonrpc: '2.0', id, result: null },
      ),
    )
  })
  await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(node.address() as AddressInfo).port}`
})

afterAll(async () => {
  await new Promise((resolve) => node?.close(resolve))
})

async function service(): Promise<Harness> {
  return createHarness({
    clock: fakeClock(Date.UTC(2026, 5, 1)),
    rpc: { [CAIP2]: url, [BIP122]: url },
    sending: { worker: false, pollIntervalMs: 20 },
  })
}

async function pendingRow(h: Harness, caip2: string, notBefore = 0) {
  const now = h.clock.now()
  const row = {
    id: `send-${caip2}-${notBefore}`,
    organizationId: h.organizationId,
    activityId: 'activity',
    caip2,
    sender: '0x0000000000000000000000000000000000000001',
    account: '0x0000000000000000000000000000000000000001',
    sponsored: false,
    signedTransaction: `0x02${'00'.repeat(40)}`,
    txHash: `0x${'cd'.repeat(32)}`,
    status: 'PENDING' as const,
    attempts: 0,
    notBefore,
    replacements: 0,
    createdAt: now,
    updatedAt: now,
  }
  await h.service.store.transaction((tx) => tx.put('sendTransactions', row))
  return row.id
}

describe('the send worker', () => {
  it('refuses an unknown chain namespace at submit, and never broadcasts such a row through eth_sendRawTransaction', async () => {
    const h = await service()
    h.clock.set(Date.now())
    const raw = await h.submit('eth_send_raw_transaction', { signedTransaction: '0x02', caip2: BIP122 })
    expect(raw).toMatchObject({ status: 400, body: { details: { field: 'parameters.caip2' } } })
    const wallet = await h.submit('create_wallet', { walletName: 'W', accounts: [ETHEREUM_ACCOUNT] })
    const from = wallet.body.activity.result.createWalletResult.addresses[0]
    const send = await h.submit('eth_send_transaction', {
      from,
      caip2: BIP122,
      calls: [{ to: from, value: '1' }],
    })
    expect(send).toMatchObject({ status: 400, body: { details: { field: 'parameters.caip2' } } })
    // A row of that namespace (written by an older version, or by hand) is failed, not sent as EVM.
    const id = await pendingRow(h, BIP122)
    methods.length = 0
    const worker = startSendWorker(h.service.runtime, { loop: false })
    await worker.pass()
    await worker.stop()
    expect(methods).toEqual([])
    const row = await h.service.store.get('sendTransactions', id)
    expect(row).toMatchObject({ status: 'FAILED', error: { message: expect.stringMatching(/bip122/) } })
    await h.service.close()
  })

  it("leaves a send alone until the service's clock reaches its notBefore", async () => {
    const h = await service()
    const id = await pendingRow(h, CAIP2, h.clock.now() + 60_000)
    methods.length = 0
    const worker = startSendWorker(h.service.runtime, { loop: false })
    await worker.pass()
    expect(methods).toEqual([])
    expect((await h.service.store.get('sendTransactions', id))!.status).toBe('PENDING')
    h.clock.advance(60_000)
    await worker.pass()
    await worker.stop()
    expect(methods).toContain('eth_sendRawTransaction')
    expect((await h.service.store.get('sendTransactions', id))!.status).toBe('BROADCASTED')
    await h.service.close()
  })

  it('a worker run by hand does nothing between the passes asked of it', async () => {
    const h = await service()
    h.clock.set(Date.now())
    const id = await pendingRow(h, CAIP2)
    methods.length = 0
    const worker = startSendWorker(h.service.runtime, { loop: false })
    // Ten times its poll interval: a worker passing on its own would have broadcast the send.
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(methods).toEqual([])
    expect((await h.service.store.get('sendTransactions', id))!.status).toBe('PENDING')
    await worker.pass()
    await worker.stop()
    expect(methods).toEqual(['eth_sendRawTransaction'])
    expect((await h.service.store.get('sendTransactions', id))!.status).toBe('BROADCASTED')
    await h.service.close()
  })
})
