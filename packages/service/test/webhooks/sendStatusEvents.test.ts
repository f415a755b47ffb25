// A send's status changes arrive as SEND_TRANSACTION_STATUS_UPDATES, recorded by the sending
// wing's worker through kernel/appEvents.ts (no import of the webhooks wing).
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { verifyWebhook, WEBHOOK_JWKS_PATH, type WebhookEventBody } from '@latchkey/protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  fakeClock,
  type Harness,
  resultOf,
} from '../../src/testing/harness.ts'
import { nodeWebhookTransport } from '../../src/webhooks/nodeTransport.ts'
import { type Chain, startChain, waitForSend } from '../sending/sendSupport.ts'

const CAIP2 = 'eip155:31337'
let chain: Chain
let server: Server
let h: Harness
const received: WebhookEventBody[] = []

beforeAll(async () => {
  chain = await startChain()
  server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', async () => {
      const body = Buffer.concat(chunks)
      const jwks = await (await h.service.app.request(WEBHOOK_JWKS_PATH)).json()
      const ok = verifyWebhook({ body, headers: request.headers, jwks, now: h.clock.now() }).ok
      if (ok) received.push(JSON.parse(body.toString('utf8')))
      response.writeHead(ok ? 200 : 401).end()
    })
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
}, 60_000)

afterAll(async () => {
  await new Promise((done) => server?.close(done))
  await chain?.node.close()
})

describe('send status events', { timeout: 60_000 }, () => {
  it('a send to INCLUDED arrives as BROADCASTED then INCLUDED, with its hash', async () => {
    h = await createHarness({
      clock: fakeClock(Date.now()),
      rpc: { [CAIP2]: chain.url },
      sending: { pollIntervalMs: 20 },
      webhooks: { transport: nodeWebhookTransport() },
      jobs: { pollMs: 20 },
    })
    try {
      const port = (server.address() as AddressInfo).port
      await h.submit('create_webhook_endpoint', {
        url: `http://127.0.0.1:${port}/`,
        name: 'sends',
        subscriptions: [{ eventType: 'SEND_TRANSACTION_STATUS_UPDATES' }],
      })
      h.clock.advance(1)
      const { addresses } = resultOf(
        'create_wallet',
        await h.submit('create_wallet', { walletName: 'S', accounts: [ETHEREUM_ACCOUNT] }),
      )
      await chain.fund(addresses[0], 10n ** 18n)
      const reply = await h.submit('eth_send_transaction', {
        from: addresses[0],
        caip2: CAIP2,
        calls: [{ to: '0x000000000000000000000000000000000000dEaD', value: '1' }],
      })
      const id = resultOf('eth_send_transaction', reply).sendTransactionStatusId as string
      await waitForSend(h, id)
      const deadline = Date.now() + 20_000
      while (
        !received.some((body) => (body.data as { status: string }).status === 'INCLUDED') &&
        Date.now() < deadline
      )
        await new Promise((done) => setTimeout(done, 50))
      const statuses = received.map(
        (body) => body.data as { sendTransactionStatusId: string; status: string; txHash?: string },
      )
      expect(statuses.map((data) => data.status)).toEqual(['BROADCASTED', 'INCLUDED'])
      expect(statuses.every((data) => data.sendTransactionStatusId === id)).toBe(true)
      expect(statuses[1]!.txHash).toMatch(/^0x[0-9a-f]{64}$/)
    } finally {
      await h.service.close()
    }
  })
})
