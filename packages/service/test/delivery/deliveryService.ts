// A service process with delivery configured, for the crash and multi-instance delivery tests
// (run with `node --import tsx`). It reads one JSON object from env LATCHKEY_TEST_SERVICE:
// `{ masterKey, databaseUrl? | dataDir?, delivery, jobs? }` (delivery without its mailer: SMTP goes
// through smtpMailer), serves on 127.0.0.1 (a free port), prints one JSON line (the fields of
// `dev --json` the test clients read) when ready, and writes every event to stderr as `event <name> <json>`, the
// way a log sink would.
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { hexToBytes } from '@noble/hashes/utils.js'
import { createService } from '../../src/assembly/createService.ts'
import type { DeliveryOptions } from '../../src/delivery/DeliveryOptions.ts'
import { smtpMailer } from '../../src/delivery/smtpMailer.ts'
import type { JobQueueOptions } from '../../src/kernel/JobQueue.ts'
import { openDataDir, openPostgres } from '../../src/kernel/store/durableStores.ts'

interface Config {
  masterKey: string
  databaseUrl?: string
  dataDir?: string
  delivery: DeliveryOptions
  jobs?: JobQueueOptions
}

const config = JSON.parse(process.env.LATCHKEY_TEST_SERVICE ?? '{}') as Config
const store = config.databaseUrl
  ? await openPostgres(config.databaseUrl)
  : config.dataDir
    ? await openDataDir(config.dataDir)
    : undefined
const service = await createService({
  ...(store ? { store } : {}),
  masterKey: hexToBytes(config.masterKey),
  delivery: { ...config.delivery, mailer: smtpMailer },
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
