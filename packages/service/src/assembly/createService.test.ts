import { ACTIVITY_PATHS, QUERY_PATHS } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import { ApiError } from '../kernel/base/errors.ts'
import { defineActivity, type ServicePlugin } from '../kernel/registry.ts'
import { openMemoryStore } from '../kernel/store/memory.ts'
import { createHarness, resultOf } from '../testing/harness.ts'
import { createService, WrongMasterKeyError } from './createService.ts'

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
})
