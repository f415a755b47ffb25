// The budgets kept per client address and a client that resets its TCP connection right after
// sending its request: by the time a handler asks, `socket.remoteAddress` is undefined, and such a
// request once ran as an in-process call, charged nothing (the per-address rate limit, otp_init's
// address budgets, the CAPTCHA's remoteip), while its code was still committed and sent. The
// server now reads the peer as the connection is taken; a network request whose address is still
// unknown is refused (403 CLIENT_ADDRESS_UNKNOWN), never taken for an in-process call, and the dev
// routes refuse it too.
//
// Served through `runServer` as `latchkey-service start` serves it without trusted proxies (the
// default). Loopback only; bounded counts.
import { connect } from 'node:net'
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { afterEach, describe, expect, it } from 'vitest'
import type { CreateServiceOptions } from '../../src/assembly/createService.ts'
import { trustProxies } from '../../src/config/trustedProxies.ts'
import { type RunningServer, runServer } from '../../src/server/runServer.ts'
import { createHarness, fakeClock, type Harness } from '../../src/testing/harness.ts'

type Mode = 'normal' | 'reset'

/** One raw HTTP/1.1 POST; `reset` sends it whole, then resets the connection (RST) at once. */
function rawPost(port: number, path: string, headers: Record<string, string>, body: string, mode: Mode) {
  return new Promise<string>((resolve) => {
    const socket = connect(port, '127.0.0.1')
    let data = ''
    const timer = setTimeout(() => socket.destroy(), 5000)
    const done = () => {
      clearTimeout(timer)
      resolve(data)
    }
    socket.on('data', (chunk) => {
      data += chunk.toString()
      if (data.includes('\r\n\r\n') && mode === 'normal') {
        const length = /content-length: (\d+)/i.exec(data)?.[1]
        if (length && Buffer.byteLength(data.slice(data.indexOf('\r\n\r\n') + 4)) >= Number(length))
          socket.end()
      }
    })
    socket.on('error', done)
    socket.on('close', done)
    socket.on('connect', () => {
      const head = [
        `POST ${path} HTTP/1.1`,
        'Host: 127.0.0.1',
        'Content-Type: application/json',
        'Connection: close',
        `Content-Length: ${Buffer.byteLength(body)}`,
        ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
        '',
        '',
      ].join('\r\n')
      socket.write(head + body, () => {
        if (mode === 'reset') socket.resetAndDestroy()
      })
    })
  })
}

const statusOf = (reply: string) => Number(reply.split(' ')[1] ?? 0)
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

let h: Harness | undefined
let server: RunningServer | undefined
afterEach(async () => {
  await server?.stop()
  server = undefined
  await h?.service.close().catch(() => undefined)
  h = undefined
})

async function start(rateLimits?: CreateServiceOptions['rateLimits']) {
  h = await createHarness({ clock: fakeClock(Date.now()), ...(rateLimits ? { rateLimits } : {}) })
  const harness = h
  // What the service answered each request (a reset client never reads it), and how many it is
  // still working on.
  const answered: number[] = []
  let pending = 0
  // What `start` passes with `[server] trusted_proxies = []` (the default).
  const app = trustProxies(harness.service.app.fetch, [])
  server = await runServer(harness.service, {
    port: 0,
    host: '127.0.0.1',
    drainGraceSeconds: 0,
    drainSeconds: 5,
    handleSignals: false,
    fetch: async (request, env) => {
      pending++
      try {
        const response = await app(request, env)
        answered.push(response.status)
        return response
      } finally {
        pending--
      }
    },
  })
  const port = server.port
  const headers = { [PROXY_CONFIG_HEADER]: harness.service.dev.authProxyConfigId! }
  let n = 0
  /** otp_init to a new contact; a reset one waits (2 s at most) until the service has answered it. */
  const otpInit = async (mode: Mode) => {
    const contact = `victim${++n}-${Math.random().toString(36).slice(2, 8)}@example.com`
    const before = answered.length
    const reply = await rawPost(
      port,
      '/v1/otp_init',
      headers,
      JSON.stringify({ otpType: 'OTP_TYPE_EMAIL', contact }),
      mode,
    )
    for (let waited = 0; waited < 2000 && (answered.length === before || pending > 0); waited += 10)
      await pause(10)
    return { contact, status: mode === 'normal' ? statusOf(reply) : answered[before] }
  }
  /** Codes the service sent to `contact` (dev outbox). */
  const codesFor = async (contact: string) => {
    const box = await (await harness.service.app.request(`/dev/outbox.json?contact=${contact}`)).json()
    return box.messages.length as number
  }
  /** Six otp_init from the same address, each connection reset: what they were answered, and the codes sent. */
  const resetSix = async () => {
    const statuses: (number | undefined)[] = []
    let sent = 0
    for (let i = 0; i < 6; i++) {
      const { contact, status } = await otpInit('reset')
      statuses.push(status)
      sent += await codesFor(contact)
    }
    return { statuses, sent }
  }
  return { otpInit, codesFor, resetSix }
}

/** A reset request is charged to its address (429) or, if its address is lost, refused (403). */
const refusedOrUnserved = (status: number | undefined) =>
  status === undefined || status === 429 || status === 403

describe('budgets per client address and a client that resets its connection', () => {
  it('charges a reset otp_init to the per-client-address rate limit ([rate_limits] per_client_address)', async () => {
    // One /v1 call per 1000 s from an address (burst 1).
    const { otpInit, codesFor, resetSix } = await start({ perClientAddress: { perSecond: 0.001, burst: 1 } })
    // Control: the first call spends the address's budget, the second is refused.
    const first = await otpInit('normal')
    expect(first.status).toBe(200)
    expect(await codesFor(first.contact)).toBe(1)
    const second = await otpInit('normal')
    expect(second.status).toBe(429)
    expect(await codesFor(second.contact)).toBe(0)
    // The same address, resetting each connection right after its request: no code is sent.
    const { statuses, sent } = await resetSix()
    expect(statuses.filter((status) => status !== undefined).length).toBeGreaterThan(0)
    expect(statuses.every(refusedOrUnserved)).toBe(true)
    expect(sent).toBe(0)
  }, 30_000)

  it("charges a reset otp_init to the address's OTP budget (20 a minute)", async () => {
    const { otpInit, codesFor, resetSix } = await start()
    // Control: 20 codes to 20 different contacts, then the address's OTP budget refuses.
    for (let i = 0; i < 20; i++) expect((await otpInit('normal')).status).toBe(200)
    const refused = await otpInit('normal')
    expect(refused.status).toBe(429)
    expect(await codesFor(refused.contact)).toBe(0)
    // Resetting the connection buys no code.
    const { statuses, sent } = await resetSix()
    expect(statuses.filter((status) => status !== undefined).length).toBeGreaterThan(0)
    expect(statuses.every(refusedOrUnserved)).toBe(true)
    expect(sent).toBe(0)
  }, 30_000)
})

describe('a network request whose client address is unknown', () => {
  /** As @hono/node-server hands over a request whose socket has no peer address (any more). */
  const unknownPeer = { incoming: { socket: {} } }
  const fromAddress = (remoteAddress: string) => ({ incoming: { socket: { remoteAddress } } })

  async function otpInit(harness: Harness, contact: string, env?: object) {
    const response = await harness.service.app.request(
      '/v1/otp_init',
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [PROXY_CONFIG_HEADER]: harness.service.dev.authProxyConfigId!,
        },
        body: JSON.stringify({ otpType: 'OTP_TYPE_EMAIL', contact }),
      },
      env,
    )
    return { status: response.status, body: await response.json() }
  }

  it('is refused by the auth proxy (403 CLIENT_ADDRESS_UNKNOWN), not served as an in-process call', async () => {
    h = await createHarness({ rateLimits: { perClientAddress: { perSecond: 0.001, burst: 1 } } })
    const outbox = async (contact: string) =>
      (await (await h!.service.app.request(`/dev/outbox.json?contact=${contact}`)).json()).messages.length
    // Controls: an in-process call and a client with an address are served.
    expect((await otpInit(h, 'inprocess@example.com')).status).toBe(200)
    expect((await otpInit(h, 'known@example.com', fromAddress('203.0.113.7'))).status).toBe(200)
    expect((await otpInit(h, 'known2@example.com', fromAddress('203.0.113.7'))).status).toBe(429)
    // No address: refused before anything is done, whatever the budgets.
    const unknown = await otpInit(h, 'unknown@example.com', unknownPeer)
    expect(unknown.status).toBe(403)
    expect(unknown.body.details.errorCode).toBe('CLIENT_ADDRESS_UNKNOWN')
    expect(await outbox('unknown@example.com')).toBe(0)
    // The address the server captured as the request arrived is the one read, however the socket
    // reads now: a captured unknown stays unknown.
    const lost = await otpInit(h, 'lost@example.com', {
      ...fromAddress('127.0.0.1'),
      peer: { address: undefined },
    })
    expect(lost.body.details.errorCode).toBe('CLIENT_ADDRESS_UNKNOWN')
    expect(await outbox('lost@example.com')).toBe(0)
  })

  it('is refused by the development routes, which answer in-process and loopback clients only', async () => {
    h = await createHarness()
    const outbox = (env?: object) => h!.service.app.request('/dev/outbox.json', {}, env)
    expect((await outbox()).status).toBe(200)
    expect((await outbox(fromAddress('127.0.0.1'))).status).toBe(200)
    expect((await outbox(fromAddress('198.51.100.4'))).status).toBe(403)
    const unknown = await outbox(unknownPeer)
    expect(unknown.status).toBe(403)
    expect((await unknown.json()).details.errorCode).toBe('CLIENT_ADDRESS_UNKNOWN')
  })
})
