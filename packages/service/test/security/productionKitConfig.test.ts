// A production service without an `[oauth]` section but with an OAuth method enabled resolved it
// to the dev identity provider, which production does not serve: `wallet_kit_config` handed every
// app `<origin>/dev/oidc/google/authorize` and the client id `latchkey-dev-google` (a Google button
// leading to a 404), and always a `devOutboxUrl` the kit shows as "open the outbox". Production now
// advertises neither; a development service still does both.
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import { createService } from '../../src/assembly/createService.ts'
import { initParentOrganization } from '../../src/commands/init.ts'
import { openMemoryStore } from '../../src/kernel/store/memory.ts'
import { testKey } from '../../src/testing/harness.ts'

const APP = 'https://app.example.com'

async function kitConfig(mode: 'production' | 'dev') {
  const service = await createService({
    mode,
    store: await openMemoryStore(),
    masterKey: new Uint8Array(32).fill(7),
  })
  await initParentOrganization(service, {
    rootPublicKey: testKey().publicKey,
    name: 'Example',
    settings: {
      allowedOrigins: [APP],
      enabledProviders: ['email', 'google'] as never,
      sessionExpirationSeconds: '600',
    },
  })
  const configId = (await service.store.all('proxyConfigs'))[0]!.id
  const answer = await service.app.request('https://svc.example.com/v1/wallet_kit_config', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', [PROXY_CONFIG_HEADER]: configId, Origin: APP },
    body: '{}',
  })
  const body = { status: answer.status, config: await answer.json() }
  await service.close()
  return body
}

describe('wallet_kit_config advertises dev surfaces only where they are served', () => {
  it('production: no dev identity provider, no dev client id, no outbox', async () => {
    const { status, config } = await kitConfig('production')
    expect(status).toBe(200)
    expect(config.enabledProviders).toContain('google')
    expect(config.oauthAuthorizationEndpoints).toEqual({})
    expect(config.oauthClientIds).toEqual({})
    expect(config.devOutboxUrl).toBeUndefined()
    expect(JSON.stringify(config)).not.toContain('/dev/')
  })

  it('dev: the dev identity provider and the outbox, as before', async () => {
    const { status, config } = await kitConfig('dev')
    expect(status).toBe(200)
    expect(config.oauthAuthorizationEndpoints.google).toBe(
      'https://svc.example.com/dev/oidc/google/authorize',
    )
    expect(config.oauthClientIds.google).toMatch(/^latchkey-dev-/)
    expect(config.devOutboxUrl).toBe('https://svc.example.com/dev/outbox')
  })
})
