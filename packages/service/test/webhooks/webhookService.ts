// A service process delivering webhooks, for the kill -9 test (run with `node --import tsx`): the
// same createService the CLI runs, on PostgreSQL, with the Node transport and short job and
// delivery leases so a crash is recovered in seconds (the CLI's job lease is a minute). It reads
// one JSON object from env LATCHKEY_TEST_SERVICE: `{ masterKey, databaseUrl, devKey, jobs?, webhooks? }`,
// serves on 127.0.0.1 (a free port) and prints one JSON line (the fields of `dev --json` the test
// clients read) when ready; every event goes to stderr as `event <name> <json>`.
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { hexToBytes } from '@noble/hashes/utils.js'
import { createService } from '../../src/assembly/createService.ts'
import type { JobQueueOptions } from '../../src/kernel/JobQueue.ts'
import { openPostgres } from '../../src/kernel/store/durableStores.ts'
import { nodeWebhookTransport } from '../../src/webhooks/nodeTransport.ts'
import type { WebhooksOptions } from '../../src/webhooks/WebhooksOptions.ts'

interface Config {
  masterKey: string
  databaseUrl: string
  devKey: string
  jobs?: JobQueueOptions
  webhooks?: Omit<WebhooksOptions, 'transport'>
}

const config = JSON.parse(process.env.LATCHKEY_TEST_SERVICE ?? '{}') as Config
const service = await createService({
  store: await openPostgres(config.databaseUrl),
  masterKey: hexToBytes(config.masterKey),
  dev: { apiPrivateKey: config.devKey },
  webhooks: { ...config.webhooks, transport: nodeWebhookTransport() },
  ...(config.jobs ? { jobs: config.jobs } : {}),
  events: {
    emit: (name, data) => {
      process.stderr.write(`event ${name} ${JSON.stringify(data)}\n`)
    },
  },
})
const server = serve({ fetch: service.app.fetch, port: 0, hostname: '127.0.0.1' })
await new Promise<void>((resolve) => server.once('listening', resolve))
process.on('SIGTERM', async () => {
  server.close()
  await service.close()
  process.exit(0)
})
const { port } = server.address() as AddressInfo
const baseUrl = `http://127.0.0.1:${port}`
const dev = service.dev
process.stdout.write(
  `${JSON.stringify({
    baseUrl,
    organizationId: dev.organizationId,
    authProxyConfigId: dev.authProxyConfigId ?? null,
    apiPublicKey: dev.apiPublicKey,
    apiPrivateKey: dev.apiPrivateKey,
    outboxUrl: `${baseUrl}/dev/outbox`,
    trustedSignerPublicKey: dev.signerPublicKey,
  })}\n`,
)
