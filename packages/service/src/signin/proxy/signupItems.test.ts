// `/v1/signup` and `/v1/signup_v2` read each item of `apiKeys` and `authenticators` as an object:
// `[null]` answered 500 (the session-key check read `curveType` of null), now a 400 naming the item.
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import { createHarness, type Harness, type Json } from '../../testing/harness.ts'

async function proxy(h: Harness, path: string, body: unknown) {
  const res = await h.service.app.request(`/v1/${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId! },
    body: JSON.stringify(body),
  })
  const reply = (await res.json()) as Json
  return { status: res.status, errorCode: reply.details?.errorCode, field: reply.details?.field }
}

const SESSION_KEY = {
  apiKeyName: 'session',
  publicKey: `02${'11'.repeat(32)}`,
  curveType: 'API_KEY_CURVE_P256',
  expirationSeconds: '900',
}

describe('proxy sign-up with items that are not objects', () => {
  it('control: an object item is read, and the sign-up is refused for what it lacks (a way to log in)', async () => {
    const h = await createHarness()
    for (const path of ['signup', 'signup_v2'])
      expect(await proxy(h, path, { apiKeys: [SESSION_KEY] })).toEqual({
        status: 400,
        errorCode: 'FIELD_REQUIRED',
        field: undefined,
      })
  })

  it.each(['signup', 'signup_v2'])(
    '/v1/%s refuses null, a string, a number or an array item with a 400 naming it',
    async (path) => {
      const h = await createHarness()
      const replies = []
      for (const list of ['apiKeys', 'authenticators'])
        for (const item of [null, 'x', 1, []])
          replies.push(
            await proxy(h, path, { [list]: [SESSION_KEY, item].slice(list === 'apiKeys' ? 0 : 1) }),
          )
      expect(replies).toEqual([
        ...Array(4).fill({ status: 400, errorCode: 'FIELD_INVALID', field: 'apiKeys[1]' }),
        ...Array(4).fill({ status: 400, errorCode: 'FIELD_INVALID', field: 'authenticators[0]' }),
      ])
    },
  )
})
