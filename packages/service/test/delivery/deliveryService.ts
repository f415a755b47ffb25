// A service process with delivery configured, for the crash and multi-instance delivery tests
// (bundled beside the CLI, see ../support/cliEntry.ts). It reads one JSON object from env LATCHKEY_TEST_SERVICE:
// `{ masterKey, databaseUrl? | dataDir?, delivery, jobs? }` (delivery without its mailer: SMTP goes
// through smtpMailer), serves on 127.0.0.1 (a free port), prints one JSON line (the fields of
// `dev --json` the test clients read) when ready, and writes every event to stderr as `event <name> <json>`, the
// way a log sink would.
import { hexToBytes } from '@noble/hashes/utils.js'
import { createService } from '../../src/assembly/createService.ts'
import type { DeliveryOptions } from '../../src/delivery/DeliveryOptions.ts'
import { smtpMailer } from '../../src/delivery/smtpMailer.ts'
import type { JobQueueOptions } from '../../src/kernel/JobQueue.ts'
import { openDataDir, openPostgres } from '../../src/kernel/store/durableStores.ts'
import { serveChild, stderrEvents } from '../support/childService.ts'

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
  events: stderrEvents,
})
await serveChild(service)
