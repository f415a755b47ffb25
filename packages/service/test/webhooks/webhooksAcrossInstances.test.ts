// Two service instances on one PostgreSQL database deliver to one real receiver: each event is
// sent by one instance (the endpoint's lease and the job's claim), in order, none lost.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { verifyWebhook, WEBHOOK_JWKS_PATH, type WebhookEventBody } from '@latchkey/protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Harness, resultOf } from '../../src/testing/harness.ts'
import { nodeWebhookTransport } from '../../src/webhooks/nodeTransport.ts'
import { type PostgresCluster, startPostgres } from '../durability/postgres.ts'
import { twoInstances } from '../support/twoInstances.ts'

let cluster: PostgresCluster
let server: Server
const received: WebhookEventBody[] = []
const rejected: string[] = []
let jwksFrom: Harness | undefined

beforeAll(async () => {
  cluster = await startPostgres()
  server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', async () => {
      const body = Buffer.concat(chunks)
      const jwks = await (await jwksFrom!.service.app.request(WEBHOOK_JWKS_PATH)).json()
      const verdict = verifyWebhook({ body, headers: request.headers, jwks, now: jwksFrom!.clock.now() })
      if (verdict.ok) received.push(JSON.parse(body.toString('utf8')))
      else rejected.push(verdict.reason)
      response.writeHead(verdict.ok ? 200 : 401).end()
    })
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
}, 600_000)

afterAll(async () => {
  await new Promise((done) => server?.close(done))
  await cluster?.dispose()
}, 60_000)

describe('webhooks across two instances on PostgreSQL', { timeout: 120_000 }, () => {
  it('sends each event once, in order, whichever instance recorded it', async () => {
    const [a, b] = await twoInstances(cluster, 'webhooks_two', {
      webhooks: { transport: nodeWebhookTransport() },
      jobs: { pollMs: 20, backoff: { baseMs: 20, maxMs: 100 } },
    })
    jwksFrom = a
    try {
      // Both publish the one signing key made by the first start.
      const keysOf = async (h: Harness) =>
        (await (await h.service.app.request(WEBHOOK_JWKS_PATH)).json()).keys
      expect(await keysOf(b)).toEqual(await keysOf(a))
      const port = (server.address() as AddressInfo).port
      resultOf(
        'create_webhook_endpoint',
        await a.submit('create_webhook_endpoint', {
          url: `http://127.0.0.1:${port}/hook`,
          name: 'app',
          subscriptions: [{ eventType: 'LATCHKEY_WALLET_CREATED' }],
        }),
      )
      // B knows of the endpoint at once (no cache: the subscribers are read in each event's
      // transaction): its first wallet, right after A's commit, is an event too.
      const first = await b.submit('create_wallet', { walletName: 'W0', accounts: [] })
      const replies = [
        first,
        ...(await Promise.all(
          Array.from({ length: 11 }, (_, i) =>
            [a, b][i % 2]!.submit('create_wallet', { walletName: `W${i + 1}`, accounts: [] }),
          ),
        )),
      ]
      expect(replies.map((reply) => reply.status)).toEqual(Array(12).fill(200))
      const deadline = Date.now() + 60_000
      // The clock is injected: move it on so retried jobs (a later delivery waits for the head) fall due.
      while (received.length < 12 && Date.now() < deadline) {
        a.clock.advance(200)
        await new Promise((done) => setTimeout(done, 50))
      }
      // A little longer: a duplicate would show now.
      await new Promise((done) => setTimeout(done, 300))
      expect(rejected).toEqual([])
      expect(received.map((body) => body.sequence)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1))
      expect(new Set(received.map((body) => body.id)).size).toBe(12)
      const walletIds = replies.map((reply) => resultOf('create_wallet', reply).walletId).sort()
      expect(received.map((body) => (body.data as { walletId: string }).walletId).sort()).toEqual(walletIds)
    } finally {
      await a.service.close()
      await b.service.close()
    }
  })
})
