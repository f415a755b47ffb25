// A service process delivering webhooks, for the kill -9 test (bundled beside the CLI, see support/cliEntry.ts): the
// same createService the CLI runs, on PostgreSQL, with the Node transport and short job and
// delivery leases so a crash is recovered in seconds (the CLI's job lease is a minute). It reads
// one JSON object from env LATCHKEY_TEST_SERVICE: `{ masterKey, databaseUrl, devKey, jobs?, webhooks? }`,
// serves on 127.0.0.1 (a free port) and prints one JSON line (the fields of `dev --json` the test
// clients read) when ready; every event goes to stderr as `event <name> <json>`.
import { hexToBytes } from '@noble/hashes/utils.js'
import { createService } from '../../src/assembly/createService.ts'
import type { JobQueueOptions } from '../../src/kernel/JobQueue.ts'
import { openPostgres } from '../../src/kernel/store/durableStores.ts'
import { nodeWebhookTransport } from '../../src/webhooks/nodeTransport.ts'
import type { WebhooksOptions } from '../../src/webhooks/WebhooksOptions.ts'
import { serveChild, stderrEvents } from '../support/childService.ts'

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
  events: stderrEvents,
})
await serveChild(service)
