// What the test service processes (bundled beside the CLI by cliEntry.ts, see test/delivery/deliveryService.ts
// and test/webhooks/webhookService.ts) share: every event on stderr as `event <name> <json>`, the
// way a log sink would, and serving on 127.0.0.1 (a free port) with one JSON line on stdout (the
// fields of `dev --json` the test clients read) once ready; SIGTERM closes it.
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import type { Service } from '../../src/assembly/createService.ts'

/** `createService`'s `events`: each one a stderr line the parent test reads. */
export const stderrEvents = {
  emit: (name: string, data: unknown) => {
    process.stderr.write(`event ${name} ${JSON.stringify(data)}\n`)
  },
}

export async function serveChild(service: Service): Promise<void> {
  const server = serve({ fetch: service.app.fetch, port: 0, hostname: '127.0.0.1' })
  await new Promise<void>((resolve) => server.once('listening', resolve))
  process.on('SIGTERM', async () => {
    server.close()
    await service.close()
    process.exit(0)
  })
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const dev = service.dev
  const info = {
    baseUrl,
    organizationId: dev.organizationId,
    authProxyConfigId: dev.authProxyConfigId ?? null,
    apiPublicKey: dev.apiPublicKey,
    apiPrivateKey: dev.apiPrivateKey,
    outboxUrl: `${baseUrl}/dev/outbox`,
    trustedSignerPublicKey: dev.signerPublicKey,
  }
  process.stdout.write(`${JSON.stringify(info)}\n`)
}
