// Node only: `latchkey-service start --config FILE`: the service in production. It runs only on a
// configuration that is safe (see config/productionRefusals.ts), serves the parent organization
// `init` made, mounts no dev surface and prints nothing secret.
import { parseArgs } from 'node:util'
import type { Service } from '../assembly/createService.ts'
import { ConfigError } from '../config/ConfigError.ts'
import { FLAG_KEYS, inspectConfig, type LoadedConfig } from '../config/loadConfig.ts'
import { productionRefusals } from '../config/productionRefusals.ts'
import { describeStorage, productionService } from '../config/productionService.ts'
import { observabilityOptions } from '../config/sections/observability.ts'
import { sponsorBalanceOptions } from '../config/sections/sponsorship.ts'
import { trustProxies } from '../config/trustedProxies.ts'
import { observability } from '../observability/observability.ts'
import { watchSendBacklog } from '../sending/sendBacklog.ts'
import { runsSendWorker } from '../sending/sendingState.ts'
import { watchSponsorBalances } from '../sending/sponsorBalances.ts'
import { loadedSponsors } from '../sending/sponsors.ts'
import { ListenError, runServer } from '../server/runServer.ts'
import { exitWithProblems } from './config.ts'

const NAME = 'latchkey-service'

export const START_USAGE = `Usage: latchkey-service start --config FILE [options]

Runs the service in production: auth proxy at <url>/v1, activity API at <url>/public/v1, no
development surface. Refuses to run without durable storage, without an explicit master key, with
"*" in proxy.allowed_origins or with a development sign-in method; run \`latchkey-service init\`
once first. The configuration reference is docs/configuration.md.

  --config <file>        the TOML configuration (default: env LATCHKEY_CONFIG)
  --host <name>          server.host
  --port <n>             server.port
  --data-dir <dir>       storage.data_dir
  --database-url <url>   storage.database_url (better: LATCHKEY_DATABASE_URL, not visible in ps)
  --master-key-file <file>
                         master_key.key_file: the file holding the master key (64 hex)
  --new-master-key-file <file>
                         master_key.next_key_file: while rotating, the key the rotation moves to
  --json                 print one JSON line (URLs, ids, each sponsor's address) once listening
  --no-migrate           refuse a database that is behind (run latchkey-service migrate first)
  --skip-integrity-check open storage.data_dir without SQLite's quick_check (it reads the whole
                         file; for a large file you check otherwise, e.g. by restoring backups)
  --help                 show this help`

export async function run(argv: string[]): Promise<void> {
  let values: Record<string, string | boolean | undefined>
  try {
    values = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        config: { type: 'string' },
        host: { type: 'string' },
        port: { type: 'string' },
        'data-dir': { type: 'string' },
        'database-url': { type: 'string' },
        'master-key-file': { type: 'string' },
        'new-master-key-file': { type: 'string' },
        json: { type: 'boolean', default: false },
        'no-migrate': { type: 'boolean', default: false },
        'skip-integrity-check': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values
  } catch (error) {
    process.stderr.write(`${NAME}: ${(error as Error).message}\n\n${START_USAGE}\n`)
    process.exit(2)
  }
  if (values.help) {
    process.stdout.write(`${START_USAGE}\n`)
    return
  }
  let service: Service
  let telemetry: ReturnType<typeof observability>
  let loaded: LoadedConfig
  try {
    const inspected = inspectConfig({
      file: (values.config as string | undefined) ?? (process.env.LATCHKEY_CONFIG || undefined),
      flags: Object.fromEntries(
        Object.entries(FLAG_KEYS).map(([flag, key]) => [key, values[flag] as string | undefined]),
      ),
    })
    // Every reason not to run at once, as `config check` lists them.
    const problems = [
      ...inspected.problems,
      ...(inspected.loaded ? productionRefusals(inspected.loaded.config) : []),
    ]
    if (problems.length > 0 || !inspected.loaded) exitWithProblems(problems)
    for (const warning of inspected.warnings) process.stderr.write(`${NAME}: warning: ${warning}\n`)
    loaded = inspected.loaded
    // A file-system or database outage answers 503 and is recovered from; a crash must not follow.
    process.on('SIGXFSZ', () => undefined)
    telemetry = observability(observabilityOptions(loaded.config.observability))
    service = await productionService(loaded.config, {
      workers: true,
      noMigrate: values['no-migrate'] === true,
      skipIntegrityCheck: values['skip-integrity-check'] === true,
      telemetry: telemetry.serviceOptions,
    })
  } catch (error) {
    if (error instanceof ConfigError) exitWithProblems(error.problems)
    throw error
  }
  const { config } = loaded
  const row = service.runtime.serviceRow
  if (row.parentOrganizationId === undefined) {
    await service.close()
    exitWithProblems([
      `no parent organization in ${describeStorage(config)}: run \`latchkey-service init --config FILE --root-public-key HEX\` once first`,
    ])
  }
  // Each sponsor's address (what the operator funds), and its balance read in the background for
  // /readyz and /metrics (each read is a `sponsor.balance` event the metrics keep).
  const sponsors = loadedSponsors(service.runtime).map((sponsor) => ({
    owner: sponsor.id.slice(0, sponsor.id.lastIndexOf('|')),
    family: sponsor.family,
    address: sponsor.address,
  }))
  if (config.sponsorship) {
    const balances = watchSponsorBalances(service.runtime, sponsorBalanceOptions(config.sponsorship))
    service.runtime.lifecycle.onDrain(() => balances.stop())
  }
  // The open sends, read in the background for /readyz and /metrics: a send nobody broadcasts
  // (every instance without the worker, or none reaching the node) shows there and in the log.
  const sendWorker = runsSendWorker(service.runtime)
  const backlog = watchSendBacklog(service.runtime)
  service.runtime.lifecycle.onDrain(() => backlog.stop())
  const {
    host,
    port,
    trusted_proxies: trustedProxies,
    forwarded_header: forwardedHeader,
    public_url: publicUrl,
    drain_grace_seconds: drainGraceSeconds,
  } = config.server
  const settings = observabilityOptions(config.observability)
  const server = await runServer(service, {
    host,
    port,
    adminPort: settings.adminPort,
    adminHost: settings.adminHost,
    drainSeconds: settings.drainSeconds,
    drainGraceSeconds,
    ...telemetry.serverOptions,
    fetch: trustProxies(service.app.fetch, trustedProxies, forwardedHeader),
  }).catch(async (error: Error) => {
    const hint =
      error instanceof ListenError && error.code === 'EADDRINUSE'
        ? `port ${port} is already in use (server.port)`
        : error.message
    process.stderr.write(`${NAME}: cannot listen on ${host}:${port}: ${hint}\n`)
    await service.close()
    process.exit(1)
  })
  const listening = server.url
  const info = {
    baseUrl: publicUrl ?? listening,
    listening,
    ...(server.adminUrl ? { adminUrl: server.adminUrl } : {}),
    organizationId: row.parentOrganizationId,
    authProxyConfigId: row.authProxyConfigId ?? null,
    trustedSignerPublicKey: row.signerPublicKey,
    ...(sponsors.length > 0 ? { sponsors } : {}),
    sendWorker,
  }
  const workerLine = sendWorker
    ? 'on'
    : `off (${config.sending.worker ? 'no [rpc] node' : '[sending] worker = false: another instance must run it'})`
  if (values.json) process.stdout.write(`${JSON.stringify(info)}\n`)
  else
    process.stdout.write(
      [
        `Latchkey service (production) listening on ${listening}`,
        `  public URL              ${info.baseUrl}`,
        `  activity API            ${info.baseUrl}/public/v1`,
        `  auth proxy              ${info.baseUrl}/v1`,
        `  organizationId          ${info.organizationId}`,
        `  authProxyConfigId       ${info.authProxyConfigId ?? 'none'}`,
        `  trustedSignerPublicKey  ${info.trustedSignerPublicKey}`,
        `  data                    ${describeStorage(config)}`,
        ...sponsors.map(
          ({ owner, family, address }) =>
            `  sponsor ${`${owner} ${family === 'eip155' ? 'EVM' : 'Solana'}`.padEnd(15)} ${address} (fund it)`,
        ),
        `  send worker             ${workerLine}`,
        ...(server.adminUrl ? [`  metrics and probes      ${server.adminUrl}/metrics`] : []),
        `  trusted proxies         ${trustedProxies.length > 0 ? `${trustedProxies.join(', ')} (client address from ${forwardedHeader})` : 'none (X-Forwarded-* and Forwarded are ignored)'}`,
        '',
      ].join('\n'),
    )
}
