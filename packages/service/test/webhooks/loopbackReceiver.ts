// A webhook receiver on loopback for the tests of the file or describe block it is used in:
// listening on a free port before them, closed after them.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { WebhookEventBody } from '@latchkey/protocol'
import { afterAll, beforeAll } from 'vitest'

/** The receiver: `status` answers every request (500 at first); `received` holds the bodies it took (a 2xx). */
export interface LoopbackReceiver {
  status: number
  received: WebhookEventBody[]
  /** Its port, once listening. */
  readonly port: number
}

/** Registers the beforeAll/afterAll that start and close a {@link LoopbackReceiver}, and returns it. */
export function useLoopbackReceiver(): LoopbackReceiver {
  let server: Server | undefined
  const receiver = {
    status: 500,
    received: [] as WebhookEventBody[],
    get port() {
      if (!server) throw new Error('the loopback receiver is read before its beforeAll started it')
      return (server.address() as AddressInfo).port
    },
  }
  beforeAll(async () => {
    const listening = createServer((request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => {
        if (receiver.status < 300) receiver.received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')))
        response.writeHead(receiver.status).end()
      })
    })
    server = listening
    await new Promise<void>((done) => listening.listen(0, '127.0.0.1', done))
  })
  afterAll(async () => {
    await new Promise((done) => server?.close(done))
  })
  return receiver
}
