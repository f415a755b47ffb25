// kill -9 of a service process (PostgreSQL) while a webhook delivery is in flight: the receiver
// holds the request, the process dies; after the restart the event is delivered under the same
// event id, signed so the verifier accepts it, and only once more.
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createInterface } from 'node:readline'
import { verifyWebhook, WEBHOOK_JWKS_PATH, type WebhookEventBody } from '@latchkey/protocol'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresCluster, startPostgres } from '../durability/postgres.ts'
import { scriptCommand } from '../support/cliEntry.ts'
import { RootClient, resultOf } from '../support/RootClient.ts'
import { type DevInfo, root } from '../support/serviceProcess.ts'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const children = new Set<ChildProcess>()
afterEach(() => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  children.clear()
})

/** The service of webhookService.ts as a child process; resolves once it printed its line. */
async function startProcess(config: object) {
  const child = spawn(process.execPath, scriptCommand('webhookService'), {
    cwd: root,
    env: { ...process.env, LATCHKEY_TEST_SERVICE: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.add(child)
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no line within 60 s\n${stderr}`)), 60_000)
    createInterface({ input: child.stdout! }).once('line', (first) => {
      clearTimeout(timer)
      resolve(first)
    })
    void exited.then(() => reject(new Error(`exited before it was ready\n${stderr}`)))
  })
  child.stdout!.resume()
  const info = JSON.parse(line) as DevInfo
  return {
    info,
    baseUrl: info.baseUrl,
    stderr: () => stderr,
    async crash() {
      child.kill('SIGKILL')
      await exited
    },
    async stop() {
      child.kill('SIGTERM')
      await exited
    },
  }
}

let cluster: PostgresCluster
let server: Server
/** While true, every request is held unanswered (the process dies waiting). */
let hold = true
const held: { headers: IncomingHttpHeaders; response: ServerResponse }[] = []
const arrived: { headers: IncomingHttpHeaders; body: Buffer }[] = []

beforeAll(async () => {
  cluster = await startPostgres()
  server = createServer(async (request, response) => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    if (hold) {
      held.push({ headers: request.headers, response })
      return
    }
    arrived.push({ headers: request.headers, body: Buffer.concat(chunks) })
    response.writeHead(200).end()
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
}, 600_000)

afterAll(async () => {
  server?.closeAllConnections()
  await new Promise((done) => server?.close(done))
  await cluster?.dispose()
}, 60_000)

describe('kill -9 mid-delivery (PostgreSQL)', () => {
  it('the restarted process delivers the event under the same id, once', { timeout: 120_000 }, async () => {
    cluster.psql('CREATE DATABASE webhook_crash')
    const config = {
      masterKey: randomBytes(32).toString('hex'),
      databaseUrl: cluster.url.replace(/\/[^/]+$/, '/webhook_crash'),
      devKey: randomBytes(32).toString('hex'),
      jobs: { pollMs: 50, leaseMs: 3000, backoff: { baseMs: 100, maxMs: 500 } },
      webhooks: { timeoutMs: 2000, connectTimeoutMs: 1000 },
    }
    const first = await startProcess(config)
    const client = new RootClient(first.info)
    const port = (server.address() as AddressInfo).port
    resultOf(
      'create_webhook_endpoint',
      await client.submit(first, 'create_webhook_endpoint', {
        url: `http://127.0.0.1:${port}/hook`,
        name: 'crash',
        subscriptions: [{ eventType: 'LATCHKEY_WALLET_CREATED' }],
      }),
    )
    const { walletId } = resultOf(
      'create_wallet',
      await client.submit(first, 'create_wallet', { walletName: 'W', accounts: [] }),
    )
    for (let i = 0; held.length === 0; i++) {
      if (i > 500) throw new Error(`the first process never sent\n${first.stderr()}`)
      await sleep(20)
    }
    const eventId = held[0]!.headers['x-turnkey-event-id']
    await first.crash()
    for (const { response } of held.splice(0)) response.destroy()
    hold = false

    const second = await startProcess(config)
    try {
      const deadline = Date.now() + 60_000
      while (arrived.length === 0) {
        if (Date.now() > deadline) throw new Error(`nothing delivered after the restart\n${second.stderr()}`)
        await sleep(50)
      }
      // A little longer: a duplicate would show now.
      await sleep(1000)
      expect(arrived).toHaveLength(1)
      const [delivery] = arrived
      const jwks = await (await fetch(`${second.baseUrl}${WEBHOOK_JWKS_PATH}`)).json()
      expect(
        verifyWebhook({ body: delivery!.body, headers: delivery!.headers, jwks, now: Date.now() }),
      ).toMatchObject({
        ok: true,
        eventId,
      })
      const body = JSON.parse(delivery!.body.toString('utf8')) as WebhookEventBody
      expect(body).toMatchObject({
        id: eventId,
        type: 'LATCHKEY_WALLET_CREATED',
        sequence: 1,
        data: { walletId },
      })
    } finally {
      await second.stop()
    }
  })
})
