import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { PROXY_CONFIG_HEADER, PROXY_NONCE_HEADER } from '@latchkey/protocol'
import { sql } from 'kysely'
import { describe, expect, it, vi } from 'vitest'
import type { Reader } from '../kernel/Reader.ts'
import type { ActivityContext, ActivityHandler, PrepareContext } from '../kernel/registry.ts'
import { kyselyOf } from '../kernel/store/kyselyOf.ts'
import { createHarness, ETHEREUM_ACCOUNT, type Harness, resultOf } from '../testing/harness.ts'

/** The route families' body-size limits and JSON checks, through `app.request()` (no port). */

const MB = 1024 * 1024

/** A request body that counts what the service pulls from it; `stall` stops after the first chunk. */
function countingBody(options: { chunk?: number; stall?: boolean } = {}) {
  const chunk = options.chunk ?? 64 * 1024
  let pulled = 0
  let first = true
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (options.stall && !first) return new Promise<void>(() => {})
        first = false
        pulled += chunk
        controller.enqueue(new Uint8Array(chunk).fill(0x20))
      },
    },
    { highWaterMark: 0 },
  ) // pulled only when the service reads
  return { stream, pulled: () => pulled }
}

function familyRequests(h: Harness): { name: string; path: string; headers: Record<string, string> }[] {
  const configId = h.service.dev.authProxyConfigId!
  return [
    { name: 'auth proxy', path: '/v1/otp_init', headers: { [PROXY_CONFIG_HEADER]: configId } },
    { name: 'operator settings', path: '/dev/settings/get', headers: {} },
    { name: 'dev identity provider', path: '/dev/oidc/google/token', headers: {} },
    { name: 'activity API', path: '/public/v1/submit/create_wallet', headers: {} },
    { name: 'query API', path: '/public/v1/query/list_wallets', headers: {} },
  ]
}

const send = (h: Harness, path: string, body: BodyInit, headers: Record<string, string>) =>
  h.service.app.request(path, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', ...headers },
    duplex: 'half',
  } as RequestInit)

describe('the request pipeline', () => {
  it('refuses a body declared over the limit before reading any of it, on every route family', async () => {
    const h = await createHarness()
    for (const { name, path, headers } of familyRequests(h)) {
      const body = countingBody()
      const response = await send(h, path, body.stream, { ...headers, 'content-length': String(100 * MB) })
      expect({ name, status: response.status, body: await response.json() }).toMatchObject({
        name,
        status: 413,
        body: { details: { errorCode: 'PAYLOAD_TOO_LARGE' } },
      })
      expect({ name, pulled: body.pulled() }).toEqual({ name, pulled: 0 })
    }
  })

  it('answers a stalled upload of a declared 1 MB at once instead of waiting for it', async () => {
    const h = await createHarness()
    for (const { name, path, headers } of familyRequests(h)) {
      const body = countingBody({ chunk: 1024, stall: true })
      const response = await send(h, path, body.stream, { ...headers, 'content-length': String(MB) })
      expect({ name, status: response.status }).toEqual({ name, status: 413 })
    }
  })

  it('cuts off a body without a length as soon as it passes the limit', async () => {
    const h = await createHarness()
    for (const { name, path, headers } of familyRequests(h)) {
      const body = countingBody({ chunk: 16 * 1024 })
      const response = await send(h, path, body.stream, headers)
      expect({ name, status: response.status }).toEqual({ name, status: 413 })
      // The largest family limit is 256 KiB: never much more than that is read.
      expect(body.pulled()).toBeLessThanOrEqual(256 * 1024 + 32 * 1024)
    }
  })

  it('keeps memory flat under a flood of oversized bodies', async () => {
    const h = await createHarness()
    const requests = familyRequests(h)
    const before = process.memoryUsage().rss
    let pulled = 0
    for (let round = 0; round < 40; round++)
      await Promise.all(
        requests.map(async ({ path, headers }) => {
          const body = countingBody()
          const response = await send(h, path, body.stream, {
            ...headers,
            'content-length': String(100 * MB),
          })
          await response.arrayBuffer()
          pulled += body.pulled()
        }),
      )
    // 200 requests declaring 100 MB each (20 GB): nothing read, and the process did not grow by them.
    expect(pulled).toBe(0)
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * MB)
  })

  it('answers 400 FIELD_INVALID naming the field for JSON nested 5,000 deep (submit, query, proxy, settings)', async () => {
    const h = await createHarness()
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`
    const deepParameters = `{"type":"ACTIVITY_TYPE_CREATE_WALLET","timestampMs":"${h.clock.now()}","organizationId":"${h.organizationId}","parameters":{"walletName":"w","accounts":${deep}}}`
    const [header, stamp] = h.root.stamp(deepParameters)
    const submitted = await h.post('/public/v1/submit/create_wallet', deepParameters, { [header]: stamp })
    expect(submitted).toMatchObject({ status: 400, body: { details: { errorCode: 'FIELD_INVALID' } } })
    expect(submitted.body.details.field).toMatch(/^parameters\.accounts(\[0\])+$/)

    const deepQuery = `{"organizationId":"${h.organizationId}","filter":${deep}}`
    const [queryHeader, queryStamp] = h.root.stamp(deepQuery)
    const queried = await h.post('/public/v1/query/list_wallets', deepQuery, { [queryHeader]: queryStamp })
    expect(queried).toMatchObject({ status: 400, body: { details: { errorCode: 'FIELD_INVALID' } } })
    expect(queried.body.details.field).toMatch(/^filter(\[0\])+$/)

    const proxied = await h.post('/v1/otp_init', `{"contact":${deep}}`, {
      [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
    })
    expect(proxied).toMatchObject({ status: 400, body: { details: { errorCode: 'FIELD_INVALID' } } })
    expect(proxied.body.details.field).toMatch(/^contact(\[0\])+$/)

    const settings = await h.post('/dev/settings/update', `{"settings":${deep}}`)
    expect(settings).toMatchObject({ status: 400, body: { details: { errorCode: 'FIELD_INVALID' } } })
  })

  it('maps every failure through one error shape, unknown routes included', async () => {
    const h = await createHarness()
    const notJson = await h.post('/v1/otp_init', '{', {
      [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
    })
    expect(notJson).toMatchObject({ status: 400, body: { code: 3, details: { errorCode: 'BODY_INVALID' } } })
    const array = await h.post('/public/v1/query/whoami', '[]')
    expect(array).toMatchObject({ status: 400, body: { details: { errorCode: 'BODY_INVALID' } } })
    const missing = await h.post('/nowhere', '{}')
    expect(missing).toMatchObject({
      status: 404,
      body: { code: 5, details: { errorCode: 'ROUTE_NOT_FOUND' } },
    })
    const unknownProxyRoute = await h.post('/v1/nowhere', '{}', {
      [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
    })
    expect(unknownProxyRoute).toMatchObject({
      status: 404,
      body: { details: { errorCode: 'ROUTE_NOT_FOUND' } },
    })
  })
})

describe('replays', () => {
  it("a replayed request is its first activity, whatever nonce header it carries (only the proxy's own stamps may add one)", async () => {
    const h = await createHarness()
    const timestampMs = String(h.clock.now())
    const send = (nonce?: string) =>
      h.submit(
        'create_wallet',
        { walletName: 'once', accounts: [] },
        { timestampMs, ...(nonce ? { headers: { [PROXY_NONCE_HEADER]: nonce } } : {}) },
      )
    const first = await send()
    expect(first.status).toBe(200)
    const replays = await Promise.all([send('a'), send('b'), send()])
    for (const replay of replays) expect(replay.body.activity.id).toBe(first.body.activity.id)
    expect((await h.service.store.findBy('wallets', 'organizationId', h.organizationId)).length).toBe(1)
  })
})

describe('the auth proxy user’s nonce', () => {
  it('is honoured for the proxy user’s own stamps whatever organization they target, and for no one else', async () => {
    const h = await createHarness()
    const plugin = h.service.registry.plugins.find((p) => p.ownsCaller)!
    const config = (await h.service.store.get('proxyConfigs', h.service.dev.authProxyConfigId!))!
    const proxyKey = (await h.service.store.findBy('apiKeys', 'userId', config.proxyUserId!))[0]!
    const caller = (userId: string, organizationId: string, id: string) => ({
      userId,
      organizationId,
      credential: { kind: 'API_KEY' as const, id, publicKey: '', scheme: '', signature: '' },
      readOnly: false,
    })
    expect(
      await plugin.ownsCaller!(caller(config.proxyUserId!, h.organizationId, proxyKey.id), h.service.runtime),
    ).toBe(true)
    expect(
      await plugin.ownsCaller!(
        caller(h.service.dev.userId, h.organizationId, h.service.dev.apiKeyId),
        h.service.runtime,
      ),
    ).toBe(false)
  })
})

describe('the request pipeline over a real socket (@hono/node-server, the body read from the Node stream)', () => {
  async function served(h: Harness) {
    const server = serve({ fetch: h.service.app.fetch, port: 0, hostname: '127.0.0.1' })
    await new Promise((resolve) => server.once('listening', resolve))
    const { port } = server.address() as AddressInfo
    return {
      /** POSTs `chunks` one by one (chunked, no length unless `headers` declare one). */
      post(path: string, chunks: Uint8Array[], headers: Record<string, string> = {}) {
        return new Promise<{ status: number; body: string; origin?: string; vary?: string }>(
          (resolve, reject) => {
            const req = request(
              {
                host: '127.0.0.1',
                port,
                path,
                method: 'POST',
                headers: { 'content-type': 'application/json', ...headers },
              },
              (res) => {
                let body = ''
                res.setEncoding('utf8')
                res.on('data', (chunk: string) => {
                  body += chunk
                })
                res.on('end', () =>
                  resolve({
                    status: res.statusCode ?? 0,
                    body,
                    ...(res.headers['access-control-allow-origin']
                      ? { origin: String(res.headers['access-control-allow-origin']) }
                      : {}),
                    ...(res.headers.vary ? { vary: String(res.headers.vary) } : {}),
                  }),
                )
              },
            )
            // A server that answers early may close the socket while the rest is still being sent.
            req.on('error', (error: NodeJS.ErrnoException) =>
              error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error),
            )
            const write = (index: number) => {
              if (index === chunks.length) return req.end()
              req.write(chunks[index]!, () => setImmediate(() => write(index + 1)))
            }
            write(0)
          },
        )
      },
      close: () => new Promise((resolve) => server.close(resolve)),
    }
  }

  it('signs a stamped request sent in pieces, and refuses oversized bodies with 413 on every family that reads its own', async () => {
    const h = await createHarness()
    const http = await served(h)
    try {
      const body = JSON.stringify({
        type: 'ACTIVITY_TYPE_CREATE_WALLET',
        timestampMs: String(h.clock.now()),
        organizationId: h.organizationId,
        parameters: { walletName: 'pieces', accounts: [] },
      })
      const [header, stamp] = h.root.stamp(body)
      const bytes = new TextEncoder().encode(body)
      const pieces = [bytes.subarray(0, 10), bytes.subarray(10, 50), bytes.subarray(50)]
      const ok = await http.post('/public/v1/submit/create_wallet', pieces, { [header]: stamp })
      expect(ok.status, ok.body).toBe(200)
      expect(JSON.parse(ok.body).activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
      expect(ok.vary).toBe('Origin')

      const configId = h.service.dev.authProxyConfigId!
      for (const [path, headers] of [
        ['/public/v1/submit/create_wallet', {}],
        ['/public/v1/query/list_wallets', {}],
        ['/v1/otp_init', { [PROXY_CONFIG_HEADER]: configId }],
        ['/dev/settings/get', {}],
      ] as const) {
        // 40 chunks of 16 KiB with no length: 640 KiB, past every family's limit.
        const chunks = Array.from({ length: 40 }, () => new Uint8Array(16 * 1024).fill(0x20))
        const reply = await http.post(path, chunks, headers)
        expect({ path, status: reply.status, code: JSON.parse(reply.body).details?.errorCode }).toEqual({
          path,
          status: 413,
          code: 'PAYLOAD_TOO_LARGE',
        })
      }
    } finally {
      await http.close()
    }
  })

  it('grants CORS to an allowed origin only, on answers and errors alike', async () => {
    const h = await createHarness()
    const http = await served(h)
    try {
      const loopback = await http.post('/public/v1/query/list_wallets', [new TextEncoder().encode('{}')], {
        origin: 'http://localhost:5173',
      })
      expect(loopback).toMatchObject({ status: 401, origin: 'http://localhost:5173', vary: 'Origin' })
      const foreign = await http.post('/public/v1/query/list_wallets', [new TextEncoder().encode('{}')], {
        origin: 'https://evil.example',
      })
      expect(foreign.status).toBe(401)
      expect(foreign.origin).toBeUndefined()
    } finally {
      await http.close()
    }
  })
})

describe('a damaged stored row', () => {
  it('answers 503 naming the table and the row, not 500, and logs the same names', async () => {
    const h = await createHarness()
    const { walletId } = resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'Damaged', accounts: [ETHEREUM_ACCOUNT] }),
    )
    // A few bytes of the stored document damaged, as a bad disk or a hand edit would.
    await sql`update ${sql.table('wallets')} set data = substr(data, 1, length(data) - 3) where id = ${walletId}`.execute(
      kyselyOf(h.service.store),
    )
    // Another wallet commits to the table, so nothing read of it before is reused.
    h.clock.advance(1)
    resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'Fine', accounts: [ETHEREUM_ACCOUNT] }),
    )
    const logged: string[] = []
    const spy = vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
      logged.push(args.map(String).join(' '))
    })
    try {
      for (const [path, body] of [
        ['get_wallet', { walletId }],
        ['list_wallets', {}],
      ] as const) {
        const reply = await h.query(path, body)
        expect({ path, status: reply.status, errorCode: reply.body.details?.errorCode }).toEqual({
          path,
          status: 503,
          errorCode: 'STORAGE_UNAVAILABLE',
        })
        expect(reply.body.message).toContain(`wallets row ${walletId}`)
        expect(reply.body.message).not.toContain('Damaged')
      }
      expect(logged).toHaveLength(2)
      for (const line of logged) {
        expect(line).toContain(`wallets row ${walletId}`)
        expect(line).not.toContain('Damaged')
      }
    } finally {
      spy.mockRestore()
    }
  })
})

describe("a handler's prepare step", () => {
  it('is skipped, with the dry run of the decision before it, when the handler says it has nothing to prepare; it runs when it has', async () => {
    const prepared: string[] = []
    const seen: unknown[] = []
    const handler = {
      parse: (r: Reader) => ({ caip2: r.string('caip2', { max: 40 }) }),
      prepares: async (_ctx: PrepareContext, p: { caip2: string }) => p.caip2 === 'eip155:1',
      prepare: async (_ctx: PrepareContext, p: { caip2: string }) => {
        prepared.push(p.caip2)
        return `prepared for ${p.caip2}`
      },
      run: async (ctx: ActivityContext) => {
        seen.push(ctx.prepared)
        return { sendTransactionStatusId: ctx.newId() }
      },
    } as unknown as ActivityHandler<'eth_send_transaction'>
    const h = await createHarness({ activities: { eth_send_transaction: handler } })
    const transactions = vi.spyOn(h.service.runtime.store, 'transaction')
    const submit = async (caip2: string) => {
      const before = transactions.mock.calls.length
      expect((await h.submit('eth_send_transaction', { caip2 })).status).toBe(200)
      return transactions.mock.calls.length - before
    }
    const skipped = await submit('eip155:10')
    const preparing = await submit('eip155:1')
    expect(prepared).toEqual(['eip155:1'])
    expect(seen).toEqual([undefined, 'prepared for eip155:1'])
    // The dry run is a transaction of its own, rolled back: one more where there is work.
    expect(preparing).toBe(skipped + 1)
    await h.service.close()
  })
})
