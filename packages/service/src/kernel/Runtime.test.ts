import { ACTIVITIES } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import { createService } from '../assembly/createService.ts'
import { ApiError } from './base/errors.ts'
import { PluginStateKey } from './Runtime.ts'
import { defineActivity, type ServicePlugin } from './registry.ts'

interface Counter {
  loadedAt: number
  calls: number
}

const COUNTER = new PluginStateKey<Counter>('counter')

/** A plugin whose state counts the calls of its route, per service. */
const counterPlugin: ServicePlugin<Counter> = {
  name: 'counter',
  state: { key: COUNTER, load: (runtime) => ({ loadedAt: runtime.now(), calls: 0 }) },
  routes: (app, runtime) =>
    app.get('/dev/counter', (c) => c.json({ calls: ++runtime.stateOf(COUNTER).calls })),
}

describe('plugin state', () => {
  it('keeps what a plugin loads, typed, per service', async () => {
    const clock = { now: () => 1_000 }
    const one = await createService({ clock, plugins: [counterPlugin] })
    const two = await createService({ clock, plugins: [counterPlugin] })
    expect(one.runtime.stateOf(COUNTER)).toEqual({ loadedAt: 1_000, calls: 0 })
    await one.app.request('/dev/counter')
    expect(await (await one.app.request('/dev/counter')).json()).toEqual({ calls: 2 })
    expect(await (await two.app.request('/dev/counter')).json()).toEqual({ calls: 1 })
    expect(one.runtime.stateOf(COUNTER)).not.toBe(two.runtime.stateOf(COUNTER))
  })

  it('refuses a key no plugin loaded, and loading one key twice', async () => {
    const service = await createService()
    expect(() => service.runtime.stateOf(COUNTER)).toThrow('plugin state counter not loaded')
    service.runtime.keepState(COUNTER, { loadedAt: 0, calls: 0 })
    expect(() => service.runtime.keepState(COUNTER, { loadedAt: 0, calls: 0 })).toThrow(
      'plugin state counter loaded twice',
    )
  })
})

describe('plugin stamp verifiers', () => {
  const TEST_STAMP = 'X-Test-Stamp'
  /** Vouches for the dev root user when the header says the password; refuses anything else. */
  const plugin: ServicePlugin = {
    name: 'test-stamp',
    stampVerifiers: {
      [TEST_STAMP]: async (runtime, header) => {
        if (header !== 'open sesame') throw new ApiError('STAMP_INVALID', 'wrong password')
        const dev = runtime.serviceRow
        return {
          userId: dev.devUserId!,
          organizationId: dev.devOrganizationId!,
          credential: { kind: 'API_KEY', id: 'test', publicKey: '', scheme: 'TEST', signature: '' },
          readOnly: false,
        }
      },
    },
    activities: {
      update_user_name: defineActivity('update_user_name', {
        parse: (r) => ({ userId: r.string('userId'), userName: r.string('userName') }),
        run: (ctx) => ({ userId: ctx.caller.userId }),
      }),
    },
  }

  it('authenticates submissions stamped in a plugin header, never queries', async () => {
    const service = await createService({ plugins: [plugin] })
    const { organizationId } = service.dev
    const send = (route: string, stamp: string, body: Record<string, unknown>) =>
      service.app.request(`/public/v1/${route}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', [TEST_STAMP]: stamp },
        body: JSON.stringify({ organizationId, timestampMs: String(Date.now()), ...body }),
      })
    const submit = (stamp: string) =>
      send('submit/update_user_name', stamp, {
        type: ACTIVITIES.update_user_name.type,
        parameters: { userId: 'anyone', userName: 'x' },
      })
    const accepted = await submit('open sesame')
    expect(accepted.status).toBe(200)
    expect(((await accepted.json()) as { activity: { status: string } }).activity.status).toBe(
      'ACTIVITY_STATUS_COMPLETED',
    )
    const refused = await submit('guess')
    expect({ status: refused.status, body: await refused.json() }).toMatchObject({
      body: { message: 'wrong password', details: { errorCode: 'STAMP_INVALID' } },
    })
    const query = await send('query/whoami', 'open sesame', {})
    expect(((await query.json()) as { details: { errorCode: string } }).details.errorCode).toBe(
      'STAMP_MISSING',
    )
  })
})
