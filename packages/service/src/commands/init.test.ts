import { afterEach, describe, expect, it } from 'vitest'
import { createService, DevDatabaseError, type Service } from '../assembly/createService.ts'
import { ConfigError } from '../config/ConfigError.ts'
import { trustProxies } from '../config/trustedProxies.ts'
import { openMemoryStore } from '../kernel/store/memory.ts'
import { testKey } from '../testing/harness.ts'
import { initParentOrganization, readRootPublicKey } from './init.ts'

const MASTER_KEY = new Uint8Array(32).fill(7)
const APP = 'https://app.example.com'
const services: Service[] = []
afterEach(async () => {
  for (const service of services.splice(0)) await service.close()
})

async function production(store?: Awaited<ReturnType<typeof openMemoryStore>>): Promise<Service> {
  const service = await createService({
    mode: 'production',
    store: store ?? (await openMemoryStore()),
    masterKey: MASTER_KEY,
    proxySettings: { allowedOrigins: [APP] },
  })
  services.push(service)
  return service
}

const settings = {
  allowedOrigins: [APP],
  enabledProviders: ['email' as const],
  sessionExpirationSeconds: '600',
}

describe('production mode', () => {
  it('makes no dev organization and mounts no dev surface', async () => {
    const service = await production()
    expect(() => service.dev).toThrow(/no dev organization/)
    expect(await service.store.all('organizations')).toEqual([])
    for (const path of [
      '/dev/outbox.json',
      '/dev/outbox',
      '/dev/oidc/google/.well-known/openid-configuration',
      '/dev/timings',
    ])
      expect((await service.app.request(path)).status, path).toBe(404)
    expect((await service.app.request('/dev/settings/get', { method: 'POST', body: '{}' })).status).toBe(404)
    expect((await service.app.request('/dev/timings', { method: 'DELETE' })).status).toBe(404)
  })

  it('needs a durable store and an explicit master key, and refuses dev options', async () => {
    await expect(createService({ mode: 'production', masterKey: MASTER_KEY })).rejects.toThrow(
      /durable store/,
    )
    await expect(createService({ mode: 'production', store: await openMemoryStore() })).rejects.toThrow(
      /master key given explicitly/,
    )
    await expect(
      createService({ mode: 'production', store: await openMemoryStore(), masterKey: MASTER_KEY, dev: {} }),
    ).rejects.toThrow(/no dev organization/)
  })

  it('refuses a database a dev service made', async () => {
    const store = await openMemoryStore()
    const dev = await createService({ store, masterKey: MASTER_KEY })
    await expect(createService({ mode: 'production', store, masterKey: MASTER_KEY })).rejects.toBeInstanceOf(
      DevDatabaseError,
    )
    await dev.close()
  })

  it('sends security headers, and frames only for allowed origins', async () => {
    const service = await production()
    await initParentOrganization(service, { rootPublicKey: testKey().publicKey, name: 'Example', settings })
    const signer = await service.app.request('/public/v1/signer')
    expect(Object.fromEntries(signer.headers)).toMatchObject({
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
      'x-frame-options': 'DENY',
    })
    const frame = await service.app.request(`/frame/export?origin=${encodeURIComponent(APP)}`)
    expect(frame.status).toBe(200)
    expect(frame.headers.get('content-security-policy')).toMatch(new RegExp(`frame-ancestors ${APP}$`))
    expect(frame.headers.get('x-frame-options')).toBeNull()
    expect(frame.headers.get('x-content-type-options')).toBe('nosniff')
    const foreign = await service.app.request(
      `/frame/export?origin=${encodeURIComponent('https://evil.example')}`,
    )
    expect(foreign.status).toBe(403)
  })
})

describe('initParentOrganization', () => {
  it('makes the organization once: a second run writes nothing and answers the same ids', async () => {
    const service = await production()
    const root = testKey()
    const ids = await initParentOrganization(service, {
      rootPublicKey: root.publicKey,
      name: 'Example',
      settings,
    })
    const before = JSON.stringify(
      await Promise.all(
        (['organizations', 'users', 'apiKeys', 'proxyConfigs', 'service'] as const).map((t) =>
          service.store.all(t),
        ),
      ),
    )
    expect(
      await initParentOrganization(service, { rootPublicKey: root.publicKey, name: 'Other', settings: {} }),
    ).toEqual(ids)
    const after = JSON.stringify(
      await Promise.all(
        (['organizations', 'users', 'apiKeys', 'proxyConfigs', 'service'] as const).map((t) =>
          service.store.all(t),
        ),
      ),
    )
    expect(after).toBe(before)
    const config = await service.store.get('proxyConfigs', ids.authProxyConfigId)
    expect(config).toMatchObject({ organizationId: ids.organizationId, enabled: true, settings })
    expect(config?.proxyUserId).toBeDefined()
  })

  it('refuses another root key once the organization exists', async () => {
    const service = await production()
    await initParentOrganization(service, { rootPublicKey: testKey().publicKey, name: 'Example', settings })
    await expect(
      initParentOrganization(service, { rootPublicKey: testKey().publicKey, name: 'Example', settings }),
    ).rejects.toThrow(/made with another root key/)
  })

  it('serves the organization to its root key, and start applies the proxy settings to it', async () => {
    const store = await openMemoryStore()
    const first = await production(store)
    const root = testKey()
    const ids = await initParentOrganization(first, {
      rootPublicKey: root.publicKey,
      name: 'Example',
      settings: { ...settings, allowedOrigins: ['https://before.example'] },
    })
    const body = JSON.stringify({ organizationId: ids.organizationId })
    const [header, stamp] = root.stamp(body)
    const reply = await first.app.request('/public/v1/query/whoami', {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', [header]: stamp },
    })
    expect(reply.status).toBe(200)
    expect(await reply.json()).toMatchObject({ organizationId: ids.organizationId, userId: ids.rootUserId })
    expect((await store.get('proxyConfigs', ids.authProxyConfigId))?.settings.allowedOrigins).toEqual([
      'https://before.example',
    ])
    // The next start writes the configuration's proxy settings into the organization's proxy.
    const second = await createService({
      mode: 'production',
      store,
      masterKey: MASTER_KEY,
      proxySettings: { allowedOrigins: [APP] },
    })
    expect((await store.get('proxyConfigs', ids.authProxyConfigId))?.settings.allowedOrigins).toEqual([APP])
    expect(second.runtime.serviceRow.parentOrganizationId).toBe(ids.organizationId)
  })

  it('reads the root key compressed or not, and refuses anything else', () => {
    const key = testKey()
    expect(readRootPublicKey(key.publicKey)).toBe(key.publicKey)
    const point = '04' + '11'.repeat(64)
    expect(() => readRootPublicKey(point)).toThrow(ConfigError)
    expect(() => readRootPublicKey('abcd')).toThrow(/66 characters/)
  })
})

describe('trustProxies', () => {
  /** A request from `peer` through the configured proxies, as @hono/node-server hands it over. */
  async function fromPeer(service: Service, peer: string, headers: Record<string, string>) {
    const fetch = trustProxies(service.app.fetch, ['10.0.0.0/8'])
    return fetch(new Request('http://127.0.0.1/public/v1/signer', { headers }), {
      incoming: { socket: { remoteAddress: peer } },
    })
  }

  it('believes the Host a trusted proxy forwards, and ignores it from anyone else', async () => {
    const service = await production()
    await initParentOrganization(service, { rootPublicKey: testKey().publicKey, name: 'Example', settings })
    const rebinding = {
      host: '127.0.0.1',
      origin: 'https://evil.example',
      'x-forwarded-host': 'evil.example',
    }
    expect((await fromPeer(service, '10.1.2.3', rebinding)).status).toBe(403)
    expect((await fromPeer(service, '192.168.1.5', rebinding)).status).toBe(200)
    const forwardedApp = {
      host: '127.0.0.1',
      origin: 'https://evil.example',
      forwarded: 'for=203.0.113.9;host=app.example.com;proto=https',
    }
    expect((await fromPeer(service, '10.1.2.3', forwardedApp)).status).toBe(200)
  })
})
