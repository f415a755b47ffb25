import { ACTIVITY_PATHS, PROXY_CONFIG_HEADER, QUERY_PATHS } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import { ApiError } from '../kernel/base/errors.ts'
import { defineActivity, type ServicePlugin } from '../kernel/registry.ts'
import { openMemoryStore } from '../kernel/store/memory.ts'
import { createHarness, resultOf } from '../testing/harness.ts'
import {
  type CreateServiceOptions,
  createService,
  type Service,
  WrongMasterKeyError,
} from './createService.ts'

/** An anonymous auth-proxy call from `address`, as the Node server hands it over. */
async function proxyCall(service: Service, path: string, address = '198.51.100.7') {
  const response = await service.app.request(
    `/v1/${path}`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', [PROXY_CONFIG_HEADER]: service.dev.authProxyConfigId! },
      body: '{}',
    },
    { incoming: { socket: { remoteAddress: address } } },
  )
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

/** Sign-in and delivery options whose secrets no part but their own wing should hold. */
const WING_OPTIONS: CreateServiceOptions = {
  captcha: { provider: 'turnstile', siteKey: 'site-key-1', secret: 'captcha-secret-1' },
  oauth: {
    providers: {
      google: {
        clientId: 'google-client',
        clientSecret: 'oauth-secret-1',
        redirectUris: ['https://app.test/cb'],
        tokenEndpoint: 'https://idp.test/token',
        jwksUri: 'https://idp.test/jwks',
        authorizationEndpoint: 'https://idp.test/authorize',
        tokenEndpointAuthMethod: 'client_secret_basic',
      },
    },
  },
  delivery: {
    sms: { provider: 'webhook', url: 'https://sms.test/hook', secret: 'sms-secret-1' },
  },
  rateLimits: { perClientAddress: { perSecond: 1, burst: 1 } },
}

describe('createService', () => {
  it('serves a handler for every activity and query of the protocol', async () => {
    const { registry } = await createService()
    expect(ACTIVITY_PATHS.filter((path) => !registry.activities.has(path))).toEqual([])
    expect(QUERY_PATHS.filter((path) => !registry.queries.has(path))).toEqual([])
  })

  it('bootstraps the dev organization once and exposes its credentials', async () => {
    const service = await createService()
    const dev = service.dev
    expect(dev).toMatchObject({
      organizationId: expect.any(String),
      apiPublicKey: expect.stringMatching(/^0[23][0-9a-f]{64}$/),
      apiPrivateKey: expect.stringMatching(/^[0-9a-f]{64}$/),
      signerPublicKey: expect.stringMatching(/^04[0-9a-f]{128}$/),
      sessionPublicKey: expect.stringMatching(/^04[0-9a-f]{128}$/),
    })
    expect(await service.store.get('organizations', dev.organizationId)).toMatchObject({
      name: 'Latchkey Dev',
      rootQuorumThreshold: 1,
    })
    // Secrets are sealed in the store.
    const row = (await service.store.get('service', 'service'))!
    expect(JSON.stringify(row)).not.toContain(dev.apiPrivateKey)
  })

  it('refuses data sealed under another master key before writing anything', async () => {
    const store = await openMemoryStore()
    await createService({ store, masterKey: new Uint8Array(32).fill(1) })
    const before = JSON.stringify([
      await store.all('service'),
      await store.all('organizations'),
      await store.all('users'),
    ])
    const second = createService({ store, masterKey: new Uint8Array(32).fill(2) })
    await expect(second).rejects.toBeInstanceOf(WrongMasterKeyError)
    await expect(second).rejects.toThrow(/does not open the secrets.*nothing was changed/)
    expect(
      JSON.stringify([
        await store.all('service'),
        await store.all('organizations'),
        await store.all('users'),
      ]),
    ).toBe(before)
    // The right key still opens it.
    await expect(createService({ store, masterKey: new Uint8Array(32).fill(1) })).resolves.toBeDefined()
  })

  it('takes fixed dev credentials on first start', async () => {
    const apiPrivateKey = '1f'.repeat(32)
    const service = await createService({ dev: { organizationName: 'Storybook', apiPrivateKey } })
    expect(service.dev.apiPrivateKey).toBe(apiPrivateKey)
    expect((await service.store.get('organizations', service.dev.organizationId))?.name).toBe('Storybook')
    await expect(createService({ dev: { apiPrivateKey: 'xyz' } })).rejects.toThrow(/64 hex/)
  })

  it('writes proxy settings given at start into the dev proxy configuration', async () => {
    const service = await createService({
      proxySettings: { allowedOrigins: ['http://app.test'], sessionExpirationSeconds: '600' },
    })
    const config = (
      await service.store.findBy('proxyConfigs', 'organizationId', service.dev.organizationId)
    )[0]
    expect(config?.id).toBe(service.dev.authProxyConfigId)
    expect(config?.settings).toMatchObject({
      allowedOrigins: ['http://app.test'],
      sessionExpirationSeconds: '600',
    })
  })

  it('lets plugins add and replace activities, queries, routes and bootstrap steps', async () => {
    const plugin: ServicePlugin = {
      name: 'test',
      activities: {
        update_user_name: defineActivity('update_user_name', {
          parse: (r) => ({ userId: r.string('userId'), userName: r.string('userName') }),
          run: async (ctx, p) => {
            if (p.userName === 'forbidden') throw new ApiError('FIELD_INVALID', 'no', 'parameters.userName')
            await ctx.tx.put('pluginRows', {
              id: ctx.newId(),
              kind: 'renames',
              data: { to: p.userName },
              createdAt: ctx.now,
              updatedAt: ctx.now,
            })
            return { userId: p.userId }
          },
        }),
      },
      queries: {
        // A path outside the protocol's query map: a plain handler, typed by the plugin's field.
        count_renames: {
          parse: () => ({}),
          run: async ({ store }) => ({ count: (await store.findBy('pluginRows', 'kind', 'renames')).length }),
        },
      },
      routes: (app) => app.get('/dev/hello', (c) => c.json({ hello: 'world' })),
      bootstrap: async (tx, runtime) => {
        if (!(await tx.findBy('pluginRows', 'kind', 'boot')).length)
          await tx.put('pluginRows', {
            id: runtime.newId(),
            kind: 'boot',
            data: {},
            createdAt: 0,
            updatedAt: 0,
          })
      },
    }
    const h = await createHarness({ plugins: [plugin] })
    expect(
      resultOf('update_user_name', await h.submit('update_user_name', { userId: 'anyone', userName: 'x' })),
    ).toEqual({ userId: 'anyone' })
    expect((await h.submit('update_user_name', { userId: 'a', userName: 'forbidden' })).status).toBe(400)
    expect((await h.query('count_renames')).body).toEqual({ count: 1 })
    expect(await (await h.service.app.request('/dev/hello')).json()).toEqual({ hello: 'world' })
    expect(await h.service.store.findBy('pluginRows', 'kind', 'boot')).toHaveLength(1)
  })

  it('keeps each wing’s options in the wing: a plugin finds no CAPTCHA, OAuth or SMS secret in runtime.options', async () => {
    // A third-party plugin reads what the runtime hands every handler.
    let seen = ''
    const snoop: ServicePlugin = {
      name: 'snoop',
      bootstrap: (_tx, runtime) => {
        seen = JSON.stringify(runtime.options)
      },
    }
    const service = await createService({ ...WING_OPTIONS, plugins: [snoop] })
    expect(seen).toContain('"mode":"dev"')
    for (const secret of [
      'captcha-secret-1',
      'oauth-secret-1',
      'sms-secret-1',
      'site-key-1',
      'perClientAddress',
    ])
      expect(seen).not.toContain(secret)
    // The wings still act on them: the Turnstile site key is published, the address budget holds.
    expect(await proxyCall(service, 'wallet_kit_client_params')).toEqual({
      status: 200,
      body: { turnstileSiteKey: 'site-key-1' },
    })
    const second = await proxyCall(service, 'wallet_kit_client_params')
    expect(second.status).toBe(429)
    expect(second.body).toMatchObject({ details: { limit: 'perClientAddress' } })
    await service.close()
  })

  it('builds the wings per service: two services in one process keep their own sign-in options', async () => {
    const withCaptcha = await createService(WING_OPTIONS)
    const without = await createService()
    expect((await proxyCall(withCaptcha, 'wallet_kit_client_params')).body).toEqual({
      turnstileSiteKey: 'site-key-1',
    })
    expect((await proxyCall(without, 'wallet_kit_client_params')).body).toEqual({})
    // No budget on the second: its calls from one address are never refused.
    for (let i = 0; i < 3; i++)
      expect((await proxyCall(without, 'wallet_kit_client_params')).status).toBe(200)
    await Promise.all([withCaptcha.close(), without.close()])
  })

  it('closes each plugin after the job worker stopped, before the store', async () => {
    const order: string[] = []
    const plugin: ServicePlugin = {
      name: 'closing',
      bootstrap: (_tx, runtime) => {
        const { jobs, store } = runtime
        const [stopJobs, closeStore] = [jobs.stop.bind(jobs), store.close.bind(store)]
        jobs.stop = async () => {
          await stopJobs()
          order.push('jobs stopped')
        }
        store.close = async () => {
          order.push('store closing')
          await closeStore()
        }
      },
      close: async (runtime) => {
        // The store is still open: a wing may read or write its last word.
        order.push(
          `plugin closed, store open: ${(await runtime.store.get('service', 'service')) !== undefined}`,
        )
      },
    }
    // The delivery, limits and webhooks wings register job handlers (sending codes, deleting a
    // deleted session profile's keys, pruning deliveries, paging a resumed endpoint's backlog), so
    // the worker runs.
    const service = await createService({ ...WING_OPTIONS, plugins: [plugin] })
    expect(service.runtime.jobs.kinds()).toEqual([
      'otp.deliver',
      'limits.end_profile_sessions',
      'webhooks.prune',
      'webhooks.resume',
    ])
    await service.close()
    expect([...new Set(order)]).toEqual(['jobs stopped', 'plugin closed, store open: true', 'store closing'])
  })
})
