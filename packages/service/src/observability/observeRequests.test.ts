import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { NotFoundError } from '../kernel/base/errors.ts'
import type { ServiceLogger } from '../kernel/base/ServiceLogger.ts'
import type { Runtime } from '../kernel/Runtime.ts'
import type { ObservedEnv } from '../kernel/requestEnv.ts'
import { unavailable } from '../kernel/store/Store.ts'
import { errorResponse } from '../pipeline/errorResponse.ts'
import { observeRequests, REQUEST_ID_HEADER } from './observeRequests.ts'

/** What the middleware reads of a runtime: ids, the drain, the events it emits. */
function fakeRuntime() {
  const emitted: unknown[] = []
  const runtime = {
    newId: () => 'fresh-id',
    lifecycle: { draining: false },
    emit: (name: string, data: unknown) => emitted.push([name, data]),
  }
  return { runtime, emitted, asRuntime: runtime as unknown as Runtime }
}

describe('observeRequests', () => {
  it('answers with the response the handler made, its request id already in it (not rebuilt)', async () => {
    const { asRuntime, emitted } = fakeRuntime()
    const app = new Hono<ObservedEnv>()
    app.use('*', observeRequests(asRuntime, undefined))
    let made: Response | undefined
    app.post('/public/v1/submit/x', (c) => {
      made = c.json({ ok: true })
      return made
    })
    const answer = await app.request('/public/v1/submit/x', {
      method: 'POST',
      headers: { 'X-Request-Id': 'lb.1' },
    })
    // A header added after the handler answered makes Hono copy the answer into a new Response.
    expect(answer).toBe(made)
    expect(answer.headers.get(REQUEST_ID_HEADER)).toBe('lb.1')
    expect(await answer.json()).toEqual({ ok: true })
    expect(emitted).toEqual([['http.request', expect.objectContaining({ family: 'submit', status: 200 })]])
  })

  it('adds the request id to a Response a handler made by itself', async () => {
    const { asRuntime } = fakeRuntime()
    const app = new Hono<ObservedEnv>()
    app.use('*', observeRequests(asRuntime, undefined))
    app.get('/raw', () => new Response('raw', { status: 202 }))
    const answer = await app.request('/raw')
    expect(answer.status).toBe(202)
    expect(answer.headers.get(REQUEST_ID_HEADER)).toBe('fresh-id')
    expect(await answer.text()).toBe('raw')
  })

  it('closes the connection of an answer while the service drains, whenever the drain began', async () => {
    const { runtime, asRuntime } = fakeRuntime()
    const app = new Hono<ObservedEnv>()
    app.use('*', observeRequests(asRuntime, undefined))
    app.get('/before', (c) => c.text('before'))
    app.get('/during', (c) => {
      runtime.lifecycle.draining = true
      return c.text('during')
    })
    app.get('/raw', () => new Response('raw'))
    expect((await app.request('/during')).headers.get('connection')).toBe('close')
    expect((await app.request('/before')).headers.get('connection')).toBe('close')
    expect((await app.request('/raw')).headers.get('connection')).toBe('close')
    runtime.lifecycle.draining = false
    expect((await app.request('/before')).headers.get('connection')).toBeNull()
  })

  it('logs why the database answered 503 (its code and message) in the request line, and tells the client only to try again', async () => {
    const { asRuntime } = fakeRuntime()
    const lines: [string, Record<string, unknown>][] = []
    const logger = Object.fromEntries(
      (['debug', 'info', 'warn', 'error'] as const).map((level) => [
        level,
        (fields: Record<string, unknown>) => lines.push([level, fields]),
      ]),
    ) as unknown as ServiceLogger
    const app = new Hono<ObservedEnv>()
    app.use('*', observeRequests(asRuntime, logger))
    app.onError(errorResponse)
    const shutdown = Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01',
    })
    app.get('/down', () => {
      throw unavailable(shutdown)
    })
    app.get('/refused', () => {
      throw new NotFoundError({ code: 'ROUTE_NOT_FOUND', message: 'no such thing' })
    })
    const answer = await app.request('/down')
    expect(answer.status).toBe(503)
    const body = await answer.json()
    expect(body.details).toEqual({ errorCode: 'STORAGE_UNAVAILABLE', retryAfterSeconds: 1 })
    expect(JSON.stringify(body)).not.toContain('57P01')
    expect(lines).toEqual([
      [
        'error',
        expect.objectContaining({
          status: 503,
          errorCode: 'STORAGE_UNAVAILABLE',
          cause: '57P01 terminating connection due to administrator command',
        }),
      ],
    ])
    // Only a 503 has a cause.
    expect((await app.request('/refused')).status).toBe(404)
    expect(lines[1]![1]).not.toHaveProperty('cause')
  })
})
