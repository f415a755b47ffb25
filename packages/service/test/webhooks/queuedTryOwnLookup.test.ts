// A try queued in a receiver's kept-alive agent (its origin at the agent's socket cap) was given a
// new socket when one of the origin's sockets closed, made by Node's Agent.removeSocket with the
// closed socket's creation options: the `lookup` of the try that opened it, bound to that try's
// `ended` signal, aborted once it finished. Since bc9f6dd1 that lookup failed at once: the queued
// try (possibly another tenant's, at a shared receiver host) failed with AbortError, recorded as a
// `timeout`, never sent. The agent no longer caps sockets (the senders bound the tries in flight),
// so no try is queued in it (from the audit of bc9f6dd1).
import { createServer, type Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { afterEach, expect, it } from 'vitest'
import { refuseAddress } from '../../src/webhooks/addressPolicy.ts'
import { nodeWebhookTransport } from '../../src/webhooks/nodeTransport.ts'
import type { WebhookRequest } from '../../src/webhooks/WebhooksOptions.ts'

let server: Server | undefined
const held: Socket[] = []
afterEach(async () => {
  for (const socket of held.splice(0)) socket.destroy()
  server?.closeAllConnections()
  await new Promise((done) => server?.close(done))
})

const request = (url: string, overrides: Partial<WebhookRequest> = {}): WebhookRequest => ({
  url,
  headers: { 'content-type': 'application/json' },
  body: new TextEncoder().encode('{}'),
  refuse: (address) =>
    refuseAddress(address, { requireHttps: false, allowLoopback: false, allowList: ['127.0.0.2'] }),
  connectTimeoutMs: 1000,
  timeoutMs: 300,
  maxResponseBytes: 4096,
  signal: new AbortController().signal,
  ...overrides,
})

it('a try queued behind a receiver’s busy sockets is sent, not failed by another try’s ended lookup', async () => {
  // The first 4 requests hang (their tries time out); every later one is answered 200.
  let seen = 0
  server = createServer((incoming, response) => {
    incoming.resume()
    if (++seen <= 4) return
    incoming.on('end', () => response.writeHead(200).end('ok'))
  })
  await new Promise<void>((done) => server!.listen(0, '127.0.0.2', done))
  const port = (server.address() as AddressInfo).port
  const send = nodeWebhookTransport({
    resolve: async () => [{ address: '127.0.0.2', family: 4 }],
  })
  const url = `http://receiver.test:${port}/`
  // Four senders on one receiver host; the first whose try ends starts its next try at once.
  let next: Promise<string> | undefined
  const first = Array.from({ length: 4 }, () =>
    send(request(url)).then(
      () => 'delivered',
      (error: Error) => {
        next ??= send(request(url, { timeoutMs: 2000 })).then(
          (response) => `status ${response.status}`,
          (failed: Error) => `${failed.name}: ${failed.message}`,
        )
        return error.name
      },
    ),
  )
  expect(await Promise.all(first)).toEqual(['TimeoutError', 'TimeoutError', 'TimeoutError', 'TimeoutError'])
  expect(await next).toBe('status 200')
}, 10_000)
