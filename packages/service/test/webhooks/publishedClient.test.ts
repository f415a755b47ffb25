// @turnkey/http 6.6 manages webhook endpoints against the local service, unchanged.
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { ApiKeyStamper } from '@turnkey/api-key-stamper'
import { TurnkeyClient } from '@turnkey/http'
import { describe, expect, it } from 'vitest'
import { createHarness, fakeClock } from '../../src/testing/harness.ts'

describe('@turnkey/http against the webhooks wing', () => {
  it('creates, lists, updates and deletes an endpoint', async () => {
    const h = await createHarness({ clock: fakeClock(Date.now()) })
    const tick = setInterval(() => h.clock.set(Date.now()), 10)
    const server = serve({ fetch: (request) => h.service.app.fetch(request), port: 0, hostname: '127.0.0.1' })
    await new Promise((resolve) => server.once('listening', resolve))
    try {
      const dev = h.service.dev
      const client = new TurnkeyClient(
        { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` },
        new ApiKeyStamper({ apiPublicKey: dev.apiPublicKey, apiPrivateKey: dev.apiPrivateKey }),
      )
      const organizationId = dev.organizationId
      const created = await client.createWebhookEndpoint({
        type: 'ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT',
        timestampMs: String(Date.now()),
        organizationId,
        parameters: {
          url: 'https://hooks.example.com/latchkey',
          name: 'app',
          subscriptions: [{ eventType: 'ACTIVITY_UPDATES', isActive: true }],
        },
      })
      expect(created.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
      const endpointId = created.activity.result.createWebhookEndpointResult!.endpointId
      const listed = await client.listWebhookEndpoints({ organizationId })
      expect(listed.webhookEndpoints).toEqual([
        expect.objectContaining({ endpointId, url: 'https://hooks.example.com/latchkey', isActive: true }),
      ])
      const updated = await client.updateWebhookEndpoint({
        type: 'ACTIVITY_TYPE_UPDATE_WEBHOOK_ENDPOINT',
        timestampMs: String(Date.now()),
        organizationId,
        parameters: { endpointId, name: 'renamed' },
      })
      expect(updated.activity.result.updateWebhookEndpointResult!.webhookEndpoint.name).toBe('renamed')
      const deleted = await client.deleteWebhookEndpoint({
        type: 'ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT',
        timestampMs: String(Date.now()),
        organizationId,
        parameters: { endpointId },
      })
      expect(deleted.activity.result.deleteWebhookEndpointResult).toEqual({ endpointId })
      expect((await client.listWebhookEndpoints({ organizationId })).webhookEndpoints).toEqual([])
    } finally {
      clearInterval(tick)
      server.close()
      await h.service.close()
    }
  })
})
