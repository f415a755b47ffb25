import { get } from 'node:http'
import { connect } from 'node:net'
import { describe, expect, it } from 'vitest'
import { createService } from '../assembly/createService.ts'
import { ServiceError } from '../kernel/base/errors.ts'
import { setUnexpectedErrorLogger } from '../kernel/base/ServiceLogger.ts'
import type { ServicePlugin } from '../kernel/registry.ts'
import { createMetrics } from '../observability/metrics.ts'
import { ListenError, runServer } from './runServer.ts'

/** A GET on a connection of its own (no keep-alive pool): resolves with the status. */
function knock(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = get(url, { agent: false }, (response) => {
      response.resume()
      response.once('end', () => resolve(response.statusCode ?? 0))
    })
    request.once('error', reject)
  })
}

/** A plugin route that answers after `release()` is called: a request held in flight. */
function heldRoute() {
  let release!: () => void
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  let arrived!: () => void
  const arrival = new Promise<void>((resolve) => {
    arrived = resolve
  })
  const plugin: ServicePlugin = {
    name: 'held',
    routes(app) {
      app.get('/held', async (c) => {
        arrived()
        await released
        return c.json({ finished: true })
      })
    },
  }
  return { plugin, release, arrival }
}

describe('runServer', () => {
  it('closes soon after its work is done even while clients keep connecting (they get 503, never hold it to the deadline)', async () => {
    const service = await createService()
    const server = await runServer(service, {
      port: 0,
      host: '127.0.0.1',
      drainGraceSeconds: 0,
      drainSeconds: 30,
      handleSignals: false,
    })
    // Clients with no load balancer in front: four of them, each opening a new connection as soon as
    // its last one is answered, until the listener goes. (One client with pauses can leave a gap
    // longer than the listener's quiet window on a loaded machine, and then none knocks during the
    // drain.) The drain starts once each has been answered once.
    let knocking = true
    const statuses: number[] = []
    let answeredOnce = 0
    let allAnswered: () => void = () => undefined
    const ready = new Promise<void>((resolve) => {
      allAnswered = resolve
    })
    const knocker = async () => {
      let first = true
      while (knocking) {
        try {
          statuses.push(await knock(`${server.url}/livez`))
        } catch {
          knocking = false
        }
        if (first && ++answeredOnce === 4) allAnswered()
        first = false
      }
    }
    const knocks = Promise.all([knocker(), knocker(), knocker(), knocker()])
    await ready
    const started = performance.now()
    expect(await server.stop()).toEqual({ cut: 0 })
    const seconds = (performance.now() - started) / 1000
    knocking = false
    await knocks
    // Work done at once, then at most the settling wait (2.1 s) and the close: far from drainSeconds.
    expect(seconds).toBeLessThan(5)
    expect(statuses).toContain(503)
    expect(statuses.every((status) => status === 200 || status === 503)).toBe(true)
  })

  it('drains: readiness turns 503 at once, requests are served through the grace period and answered 503 after it, the request in flight finishes, drain hooks run, then it closes', async () => {
    const held = heldRoute()
    const metrics = createMetrics({ process: false })
    const service = await createService({ plugins: [held.plugin], events: metrics })
    let hookSignal: AbortSignal | undefined
    service.runtime.lifecycle.onDrain(async (deadline) => {
      hookSignal = deadline
    })
    const server = await runServer(service, {
      port: 0,
      host: '127.0.0.1',
      adminPort: 0,
      drainGraceSeconds: 0.3,
      drainSeconds: 5,
      metrics,
      handleSignals: false,
    })
    expect(await (await fetch(`${server.adminUrl}/readyz`)).json()).toMatchObject({ ready: true })
    const inFlight = fetch(`${server.url}/held`)
    await held.arrival
    expect(server.inFlight()).toBe(1)

    const stopped = server.stop()
    const readyz = await fetch(`${server.adminUrl}/readyz`)
    expect(readyz.status).toBe(503)
    expect(await readyz.json()).toMatchObject({ ready: false, checks: { serving: false } })
    expect(await metrics.render()).toMatch(/^latchkey_server_draining 1$/m)
    // The grace period: still served, each answer closing its connection; the job workers still run.
    const during = await fetch(`${server.url}/livez`)
    expect(during.status).toBe(200)
    expect(during.headers.get('connection')).toBe('close')
    expect(hookSignal).toBeUndefined()
    // After it: refused with 503 (never a reset), and the job workers drain.
    await new Promise((resolve) => setTimeout(resolve, 400))
    const after = await fetch(`${server.url}/livez`)
    expect(after.status).toBe(503)
    expect(after.headers.get('connection')).toBe('close')
    expect(await after.json()).toMatchObject({ details: { errorCode: 'STORAGE_UNAVAILABLE' } })
    expect(hookSignal).toBeInstanceOf(AbortSignal)

    held.release()
    const answer = await inFlight
    expect(answer.status).toBe(200)
    expect(answer.headers.get('connection')).toBe('close')
    expect(await answer.json()).toEqual({ finished: true })
    expect(await stopped).toEqual({ cut: 0 })
    await expect(fetch(`${server.url}/livez`)).rejects.toThrow()
    await expect(fetch(`${server.adminUrl}/livez`)).rejects.toThrow()
    expect(await server.stop()).toEqual({ cut: 0 })
  })

  it('cuts a request that outlives the deadline and still closes', async () => {
    const held = heldRoute()
    const metrics = createMetrics({ process: false })
    const service = await createService({ plugins: [held.plugin], events: metrics })
    const server = await runServer(service, {
      port: 0,
      host: '127.0.0.1',
      drainGraceSeconds: 0,
      drainSeconds: 0.2,
      handleSignals: false,
    })
    const inFlight = fetch(`${server.url}/held`).catch((error: Error) => error)
    await held.arrival
    expect(await server.stop()).toEqual({ cut: 1 })
    expect(await inFlight).toBeInstanceOf(Error)
    expect(await metrics.render()).toMatch(/^latchkey_server_drain_cut_requests_total 1$/m)
    held.release()
  })

  it('keeps a connection between requests for a minute, not Node’s 5 s, and says so (a late next request is read, never reset)', async () => {
    const service = await createService()
    const server = await runServer(service, {
      port: 0,
      host: '127.0.0.1',
      drainGraceSeconds: 0,
      drainSeconds: 1,
      handleSignals: false,
    })
    try {
      const { port } = new URL(server.url)
      const socket = connect({ host: '127.0.0.1', port: Number(port) })
      let received = ''
      socket.setEncoding('latin1').on('data', (chunk: string) => {
        received += chunk
      })
      const answers = (count: number) =>
        new Promise<void>((resolve) => {
          const check = () =>
            (received.match(/HTTP\/1\.1 200/g)?.length ?? 0) >= count ? resolve() : setTimeout(check, 5)
          check()
        })
      const request = 'GET /livez HTTP/1.1\r\nHost: test\r\n\r\n'
      socket.write(request)
      await answers(1)
      // Node's server advertises the timeout it keeps: a client (or balancer) reuses the connection up to it.
      expect(received).toMatch(/\r\nKeep-Alive: timeout=65\r\n/i)
      socket.write(request)
      await answers(2)
      expect(socket.destroyed).toBe(false)
      socket.destroy()
    } finally {
      await server.stop()
    }
  })
})

describe('unexpected errors', () => {
  it('a bug met by a request answers 500 INTERNAL and is one structured line through the server logger, not a bare stack', async () => {
    const lines: {
      fields: { where?: string; err?: { message?: string; stack?: string } }
      message?: string
    }[] = []
    const logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: (fields: object, message?: string) => lines.push({ fields, message }),
      flush: () => undefined,
    }
    const plugin: ServicePlugin = {
      name: 'buggy',
      routes(app) {
        app.get('/buggy', () => {
          throw new TypeError('a bug')
        })
      },
    }
    const service = await createService({ plugins: [plugin] })
    const server = await runServer(service, {
      port: 0,
      host: '127.0.0.1',
      drainGraceSeconds: 0,
      logger,
      handleSignals: false,
    })
    const previous = console.error
    const plain: unknown[] = []
    console.error = (...args: unknown[]) => plain.push(args)
    try {
      const answer = await fetch(`${server.url}/buggy`)
      expect(answer.status).toBe(500)
      expect(await answer.json()).toMatchObject({ details: { errorCode: 'INTERNAL' } })
    } finally {
      console.error = previous
      setUnexpectedErrorLogger(undefined)
      await server.stop()
    }
    expect(plain).toEqual([])
    const line = lines.find((entry) => entry.message === 'unexpected error')
    expect(line?.fields).toMatchObject({ where: 'request', err: { type: 'TypeError', message: 'a bug' } })
    expect(line?.fields.err?.stack).toContain('TypeError: a bug')
  })

  it('a port that is taken refuses the start with a ListenError naming host, port, flag and code', async () => {
    const service = await createService()
    const first = await runServer(service, {
      port: 0,
      host: '127.0.0.1',
      drainGraceSeconds: 0,
      handleSignals: false,
    })
    const port = Number(new URL(first.url).port)
    try {
      const refused = await runServer(service, {
        port,
        host: '127.0.0.1',
        drainGraceSeconds: 0,
        handleSignals: false,
      }).then(
        () => undefined,
        (error: unknown) => error,
      )
      expect(refused).toBeInstanceOf(ListenError)
      expect(refused).toBeInstanceOf(ServiceError)
      expect(refused).toMatchObject({
        name: 'ListenError',
        host: '127.0.0.1',
        port,
        flag: '--port',
        code: 'EADDRINUSE',
      })
      expect((refused as ListenError).cause).toBeInstanceOf(Error)
    } finally {
      await first.stop()
    }
  })
})
