// `dev` stays on one machine: a reverse proxy on the same host makes every client look local (its
// socket is loopback), so the dev surfaces refuse any request that carries proxy headers.
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createService, type Service } from '../../src/assembly/createService.ts'

let service: Service
let direct: ReturnType<typeof serve>
let proxy: Server
let directUrl: string
let proxyUrl: string

/** The ten-line proxy an operator might put in front: forwards everything, says whom for. */
function startProxy(target: URL): Promise<Server> {
  const server = createServer((incoming, outgoing) => {
    const forwarded = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, 'x-forwarded-for': incoming.socket.remoteAddress ?? '' },
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(outgoing)
      },
    )
    incoming.pipe(forwarded)
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

beforeAll(async () => {
  service = await createService()
  direct = serve({ fetch: service.app.fetch, port: 0, hostname: '127.0.0.1' })
  await new Promise((resolve) => direct.once('listening', resolve))
  directUrl = `http://127.0.0.1:${(direct.address() as AddressInfo).port}`
  proxy = await startProxy(new URL(directUrl))
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
})

afterAll(async () => {
  proxy?.close()
  direct?.close()
  await service?.close()
})

describe('dev surfaces behind a proxy on the same machine', () => {
  it('answer a loopback client directly', async () => {
    expect((await fetch(`${directUrl}/dev/outbox.json`)).status).toBe(200)
  })

  it('refuse the same request through the proxy', async () => {
    const reply = await fetch(`${proxyUrl}/dev/outbox.json`)
    expect(reply.status).toBe(403)
    expect(((await reply.json()) as { message: string }).message).toMatch(
      /development routes do not answer through a proxy \(this request carries x-forwarded-for\)/,
    )
    expect((await fetch(`${proxyUrl}/dev/oidc/google/.well-known/openid-configuration`)).status).toBe(403)
  })

  it('refuse a request naming itself forwarded, with any proxy header', async () => {
    for (const header of ['Forwarded', 'X-Forwarded-For', 'X-Forwarded-Host', 'X-Real-IP']) {
      const reply = await fetch(`${directUrl}/dev/outbox.json`, { headers: { [header]: 'for=127.0.0.1' } })
      expect(reply.status, header).toBe(403)
    }
  })

  it('leave the auth proxy and the activity API to their own checks', async () => {
    expect((await fetch(`${proxyUrl}/public/v1/signer`)).status).toBe(200)
  })
})
